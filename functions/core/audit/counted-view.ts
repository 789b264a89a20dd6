// What the audit has folded of a topic's count-only receipts (Chaperone-style `{start, end,
// count}` buckets), per group, carried in its checkpoint so that a run reads only the posts
// written since the last one (the receipts table's sort key starts with the write time), as
// receipts-view.ts does for seq receipts. Per group: a count per time bucket, and one total of
// the buckets folded: those that ended by the retention horizon (as the topic's log buckets are
// folded) and those a report can no longer list one by one (older than the newest REPORT_ROWS
// starts among the log's buckets and the group's: new starts only come above, or fall below too).
// So it holds at most REPORT_ROWS buckets a group after each run, never more with the posts.

/** One group's counts: per bucket start (ms) from the fold on, and the total before it. */
export interface GroupCounts {
  readonly buckets: Map<number, number>;
  older: number;
  /** The earliest bucket start folded into `older` (undefined: none folded). */
  olderSince: number | undefined;
  /** The latest end of a bucket folded because no report lists it any more (ms). */
  olderUntil?: number | undefined;
}

export interface CountedViewJson {
  /** Buckets that start before this (ms) are only in each group's `older` total. */
  readonly foldedBefore: number;
  /**
   * Per group: posts written up to `upTo` (ms) are counted here; `buckets` flat, as pairs of
   * (start less the previous pair's start, count), which gzip to a few bytes a bucket.
   */
  readonly groups: Array<
    [
      group: string,
      upTo: number,
      older: number,
      olderSince: number | null,
      buckets: number[],
      olderUntil?: number,
    ]
  >;
}

export const emptyCounts = (): GroupCounts => ({
  buckets: new Map(),
  older: 0,
  olderSince: undefined,
});

/** Adds `n` to the bucket starting at `start` (ms), or to the total when it is folded already. */
export function addCount(
  counts: GroupCounts,
  start: number,
  n: number,
  foldedBefore: number,
): void {
  if (start < foldedBefore) {
    counts.older += n;
    counts.olderSince = Math.min(counts.olderSince ?? start, start);
  } else counts.buckets.set(start, (counts.buckets.get(start) ?? 0) + n);
}

function foldCounts(counts: GroupCounts, before: number): void {
  for (const [start, n] of counts.buckets) {
    if (start >= before) continue;
    counts.buckets.delete(start);
    addCount(counts, start, n, before);
  }
}

/** Per group: the count-only receipts written up to `upTo` (ms), folded. Mutable. */
export class CountedView {
  foldedBefore: number;
  readonly #groups = new Map<string, { upTo: number; counts: GroupCounts }>();

  constructor(json?: CountedViewJson) {
    this.foldedBefore = json?.foldedBefore ?? 0;
    for (const [group, upTo, older, olderSince, flat, olderUntil] of json?.groups ?? []) {
      const buckets = new Map<number, number>();
      let start = 0;
      for (let i = 0; i + 1 < flat.length; i += 2) {
        start += flat[i] as number;
        buckets.set(start, flat[i + 1] as number);
      }
      this.#groups.set(group, {
        upTo,
        counts: { buckets, older, olderSince: olderSince ?? undefined, olderUntil },
      });
    }
  }

  get isEmpty(): boolean {
    return this.#groups.size === 0 && this.foldedBefore === 0;
  }

  /** The group's folded counts and up to when, if this view holds it. */
  get(group: string): { readonly upTo: number; readonly counts: GroupCounts } | undefined {
    return this.#groups.get(group);
  }

  /** Holds `counts` for `group` as folded up to `upTo`. */
  set(group: string, upTo: number, counts: GroupCounts): void {
    this.#groups.set(group, { upTo, counts });
  }

  /** Forgets groups not audited any more (a group asked for again is read from the start). */
  keepOnly(groups: readonly string[]): void {
    for (const group of this.#groups.keys())
      if (!groups.includes(group)) this.#groups.delete(group);
  }

  /** Folds every bucket that starts before `before` (ms) into its group's total. */
  fold(before: number): void {
    if (before <= this.foldedBefore) return;
    this.foldedBefore = before;
    for (const { counts } of this.#groups.values()) foldCounts(counts, before);
  }

  /**
   * Folds each group's buckets older than the newest `rows` starts among `logStarts` and its
   * own: a report lists only the newest `rows` starts (links.ts, topicBuckets), and starts leave
   * only from the bottom (the retention's fold), so these are summed in its first row for good.
   */
  foldUnlisted(logStarts: Iterable<number>, rows: number, bucketMs: number): void {
    const log = [...logStarts];
    for (const { counts } of this.#groups.values()) {
      if (counts.buckets.size === 0) continue;
      const starts = [...new Set([...log, ...counts.buckets.keys()])].sort((a, b) => b - a);
      if (starts.length <= rows) continue;
      const listedFrom = starts[rows - 1] as number;
      for (const [start, n] of counts.buckets) {
        if (start >= listedFrom) continue;
        counts.buckets.delete(start);
        addCount(counts, start, n, Number.POSITIVE_INFINITY);
        counts.olderUntil = Math.max(counts.olderUntil ?? 0, start + bucketMs);
      }
    }
  }

  /** Folds every bucket held (the checkpoint's backstop when it does not fit its item). */
  foldAll(bucketMs: number): void {
    let last = Number.NEGATIVE_INFINITY;
    for (const { counts } of this.#groups.values())
      for (const start of counts.buckets.keys()) last = Math.max(last, start);
    if (last > Number.NEGATIVE_INFINITY) this.fold(last + bucketMs);
  }

  /**
   * What a run reports per group: the folded counts and, on top, `read` (what it read and did
   * not fold: written after its `upTo`), folded to the boundary as it now stands.
   */
  reported(read: ReadonlyMap<string, GroupCounts>): Map<string, GroupCounts> {
    const reported = new Map<string, GroupCounts>();
    for (const [group, extra] of read) {
      const held = this.#groups.get(group)?.counts;
      const sum = emptyCounts();
      for (const part of held ? [held, extra] : [extra]) {
        for (const [start, n] of part.buckets) addCount(sum, start, n, this.foldedBefore);
        if (part.olderSince !== undefined) {
          sum.older += part.older;
          sum.olderSince = Math.min(sum.olderSince ?? part.olderSince, part.olderSince);
        }
        if (part.olderUntil !== undefined)
          sum.olderUntil = Math.max(sum.olderUntil ?? 0, part.olderUntil);
      }
      reported.set(group, sum);
    }
    return reported;
  }

  toJSON(): CountedViewJson {
    return {
      foldedBefore: this.foldedBefore,
      groups: [...this.#groups].map(([group, { upTo, counts }]) => {
        const flat: number[] = [];
        let previous = 0;
        for (const start of [...counts.buckets.keys()].sort((a, b) => a - b)) {
          flat.push(start - previous, counts.buckets.get(start) as number);
          previous = start;
        }
        return [
          group,
          upTo,
          counts.older,
          counts.olderSince ?? null,
          flat,
          ...(counts.olderUntil === undefined ? [] : [counts.olderUntil]),
        ] as CountedViewJson['groups'][number];
      }),
    };
  }
}
