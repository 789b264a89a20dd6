// Done-marks of the once guard as ranges: per (group, stream, partition) the seqs acted on, as
// [from, to, lastDoneAt] with lastDoneAt the newest time (ms) a seq of the range was marked done.
// Ranges are what keep storage bounded: a partition's seqs are folded into as few ranges as the
// stream allows, ranges whose newest mark is past the retention horizon are dropped, and past
// MAX_RANGES the oldest go first, so one partition's item stays far under DynamoDB's 400 KB.

export type DoneRange = readonly [from: number, to: number, lastDoneAt: number];

/** Ranges one partition keeps at most: at worst 44 bytes each as JSON (13-digit seqs), under 180 KB. */
export const MAX_RANGES = 4000;

/** The range of `ranges` (sorted, disjoint) that holds `seq`, if any. */
function rangeOf(ranges: readonly DoneRange[], seq: number): DoneRange | undefined {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const range = ranges[mid] as DoneRange;
    if (seq < range[0]) hi = mid - 1;
    else if (seq > range[1]) lo = mid + 1;
    else return range;
  }
  return undefined;
}

export const rangesHave = (ranges: readonly DoneRange[], seq: number): boolean =>
  rangeOf(ranges, seq) !== undefined;

/** Whether every seq from..to lies in one range of `merged` (sorted, disjoint, merged). */
export const rangeCovers = (merged: readonly DoneRange[], from: number, to: number): boolean =>
  (rangeOf(merged, from)?.[1] ?? Number.NEGATIVE_INFINITY) >= to;

export interface FoldOptions {
  /** Marks with a newest done time before this (ms) are dropped. */
  readonly horizon: number;
  /**
   * Seqs done in other partitions of the stream: a gap between two ranges that lies wholly in
   * them is bridged, so a stream spread over partitions still folds into few ranges per partition.
   */
  readonly doneElsewhere?: (from: number, to: number) => boolean;
  readonly maxRanges?: number;
}

/**
 * `ranges` with `seqs` (each with its done time) added: sorted, merged where contiguous (or
 * bridged over seqs done elsewhere), past the horizon dropped, at most maxRanges (newest kept).
 */
export function foldDone(
  ranges: readonly DoneRange[],
  seqs: ReadonlyArray<readonly [seq: number, doneAt: number]>,
  options: FoldOptions,
): DoneRange[] {
  const all: Array<[number, number, number]> = [
    ...ranges.map((r): [number, number, number] => [r[0], r[1], r[2]]),
    ...seqs.map(([seq, at]): [number, number, number] => [seq, seq, at]),
  ].sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number, number]> = [];
  for (const range of all) {
    const last = merged[merged.length - 1];
    const touches =
      last !== undefined &&
      (range[0] <= last[1] + 1 || options.doneElsewhere?.(last[1] + 1, range[0] - 1) === true);
    if (last && touches) {
      last[1] = Math.max(last[1], range[1]);
      last[2] = Math.max(last[2], range[2]);
    } else merged.push([...range]);
  }
  const kept = merged.filter((r) => r[2] >= options.horizon);
  const max = options.maxRanges ?? MAX_RANGES;
  if (kept.length <= max) return kept;
  // The newest by done time are kept: the oldest marks are the least likely to be redelivered.
  const newest = new Set([...kept].sort((a, b) => b[2] - a[2]).slice(0, max));
  return kept.filter((r) => newest.has(r));
}
