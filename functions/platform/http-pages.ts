import { InvalidInputError } from '../core/shared/errors.js';
import { decodeCursor, type PageRequest } from '../core/shared/pages.js';
import { baseUrl, type HttpEvent } from './http-event.js';

// `?cursor=&limit=` of a paged answer (core/shared/pages.ts), and the link to its next page.

export interface PageLimits {
  /** Items per page when `limit` is not given: the worst case stays under Lambda's 6 MB. */
  readonly defaultLimit: number;
  readonly maxLimit: number;
}

/** `cursorless`: a route whose pages after the first are read elsewhere (its `next`). */
export function pageRequest(
  event: HttpEvent,
  limits: PageLimits & { readonly cursorless?: boolean },
): PageRequest {
  const query = event.queryStringParameters ?? {};
  const { cursor, limit } = query;
  if (cursor !== undefined && limits.cursorless) {
    throw new InvalidInputError(
      'cursor: this route answers first pages only; follow the `next` link of its answer for the rest',
      { field: 'cursor' },
    );
  }
  if (limit !== undefined && !/^[0-9]{1,6}$/.test(limit)) {
    throw new InvalidInputError(`limit: an integer from 1 to ${limits.maxLimit}`, {
      field: 'limit',
    });
  }
  const n = limit === undefined ? limits.defaultLimit : Number(limit);
  if (n < 1 || n > limits.maxLimit) {
    throw new InvalidInputError(
      `limit: ${n} is outside 1 to ${limits.maxLimit} (a page of at most ${limits.maxLimit} keeps the answer under Lambda's 6 MB); follow \`next\` for the rest`,
      { field: 'limit' },
    );
  }
  return { after: cursor === undefined ? undefined : decodeCursor(cursor), limit: n };
}

/** The URL of the next page of this answer at `path`, or undefined on the last page. */
export function nextLink(
  event: HttpEvent,
  path: string,
  next: string | undefined,
  limit: number,
): string | undefined {
  if (next === undefined) return undefined;
  const query = new URLSearchParams({ cursor: next, limit: String(limit) });
  return `${baseUrl(event)}${path}?${query}`;
}
