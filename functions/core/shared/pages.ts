import { InvalidInputError } from './errors.js';

// Answers that grow with the cluster (reconcile-now's groups, a restore's partitions, an audit's
// streams) are paged: `limit` items from after a cursor, and the cursor of the next page while
// there is one. A cursor is opaque to callers: base64url of the JSON of the last item's key, so
// a page ends where it ends whatever was added or removed before it meanwhile.

export interface PageRequest {
  /** The key of the last item of the page before (undefined: the first page). */
  readonly after: unknown;
  readonly limit: number;
}

export interface Page<T> {
  readonly items: T[];
  /** The cursor of the next page; undefined on the last. */
  readonly next?: string;
}

export function encodeCursor(key: unknown): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** The key a cursor holds; 400 naming `cursor` for anything this API did not hand out. */
export function decodeCursor(cursor: string): unknown {
  try {
    if (!/^[A-Za-z0-9_-]{1,4096}$/.test(cursor)) throw new TypeError('not base64url');
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidInputError(
      'cursor: not a cursor this API gave; pass the `next` of the page before unchanged, or leave it out for the first page',
      { field: 'cursor' },
    );
  }
}

/**
 * One page of `items`, in their order: those after the item whose key is `request.after` —
 * `follows(item, i, after)` says whether the `i`th item comes after that key in this order, so
 * a page resumes even if that item itself is gone.
 */
export function pageOf<T, K>(
  items: readonly T[],
  request: PageRequest,
  keyOf: (item: T, i: number) => K,
  follows: (item: T, i: number, after: K) => boolean,
): Page<T> {
  const from =
    request.after === undefined
      ? 0
      : items.findIndex((item, i) => follows(item, i, request.after as K));
  const start = from < 0 ? items.length : from;
  const page = items.slice(start, start + request.limit);
  const end = start + page.length;
  const last = page[page.length - 1];
  if (end >= items.length || last === undefined) return { items: page };
  return { items: page, next: encodeCursor(keyOf(last, end - 1)) };
}
