// The persisted window of offset observations for one group/topic/partition, and what can be
// read off it before judging it: the newest N kept in time order, the last good committed
// offset, and how far behind in time a committed offset is. offset-status.ts does the judging.

/**
 * One reading by reconcile. Read `committed` first and the log offsets after it: both log
 * offsets only grow, so a healthy group then always has logStart ≤ committed ≤ logEnd.
 */
export interface OffsetObservation {
  /** Epoch ms when reconcile read it. */
  readonly observedAt: number;
  /** The group's committed offset (the next record it reads); null when none (Kafka's -1). */
  readonly committed: number | null;
  /** Partition log start offset at that time. */
  readonly logStart: number;
  /** Partition high watermark at that time. */
  readonly logEnd: number;
  /**
   * Epoch ms of the commit that set `committed`, when the reader knows it (a __consumer_offsets
   * record carries it; OffsetFetch does not). Without it a commit is dated by the first
   * observation that shows its offset, and a re-commit of the same offset cannot be seen.
   */
  readonly committedAt?: number;
}

/** The window with `next` added in time order, keeping the newest `size` observations. */
export function appendObservation(
  window: readonly OffsetObservation[],
  next: OffsetObservation,
  size: number,
): OffsetObservation[] {
  checkSize(size);
  const out = [...window];
  let at = out.length;
  while (at > 0 && (out[at - 1]?.observedAt ?? Number.NEGATIVE_INFINITY) > next.observedAt) at--;
  out.splice(at, 0, next);
  return out.slice(-size);
}

export function checkSize(size: number): void {
  if (!Number.isInteger(size) || size < 1) {
    throw new RangeError(`window size must be a positive integer, not ${size}`);
  }
}

/**
 * The newest committed offset that was good: inside [logStart, logEnd] when observed, and not
 * re-consumption, i.e. not below a commit made earlier in the window (the `to` side of a rewind
 * and everything after it until the group climbs back). The offset a rewound group was rewound
 * from is therefore good: it is where the group should go back to. `at` is when it was seen.
 */
export function lastGoodOffset(
  window: readonly OffsetObservation[],
): { offset: number; at: number } | undefined {
  let good: { offset: number; at: number } | undefined;
  let highest = Number.NEGATIVE_INFINITY;
  for (const o of window) {
    if (o.committed === null) continue;
    const inRange = o.committed >= o.logStart && o.committed <= o.logEnd;
    if (inRange && o.committed >= highest) good = { offset: o.committed, at: o.observedAt };
    highest = Math.max(highest, o.committed);
  }
  return good;
}

/**
 * How a time lag was found. CAUGHT_UP: committed ≥ the newest logEnd, so 0. INTERPOLATED: two
 * consecutive observations' logEnds bracket the committed offset. EXTRAPOLATED: committed is
 * below every logEnd in the window; the oldest two observations' production rate is carried
 * back. LOWER_BOUND: below every logEnd and no rate to carry back (one observation, or the log
 * did not grow between the oldest two), so now − oldest observedAt, which the truth exceeds.
 */
export type TimeLagBasis = 'CAUGHT_UP' | 'INTERPOLATED' | 'EXTRAPOLATED' | 'LOWER_BOUND';

export interface TimeLagEstimate {
  readonly seconds: number;
  readonly basis: TimeLagBasis;
}

/**
 * Seconds behind: now − the estimated time at which the log end offset equalled `committed`
 * (when the first record the group has not read was written), from the window's
 * (observedAt, logEnd) history. Null for an empty window. Whole milliseconds, never negative.
 */
export function estimateTimeLag(
  window: readonly OffsetObservation[],
  committed: number,
  now: number,
): TimeLagEstimate | null {
  const oldest = window[0];
  const newest = window[window.length - 1];
  if (oldest === undefined || newest === undefined) return null;
  if (committed >= newest.logEnd) return { seconds: 0, basis: 'CAUGHT_UP' };
  // Newest bracket first: if the log end sat at `committed` for a while, the latest time counts.
  for (let i = window.length - 1; i > 0; i--) {
    const a = window[i - 1];
    const b = window[i];
    if (a === undefined || b === undefined) continue;
    if (a.logEnd <= committed && committed < b.logEnd) {
      const share = (committed - a.logEnd) / (b.logEnd - a.logEnd);
      return since(a.observedAt + share * (b.observedAt - a.observedAt), now, 'INTERPOLATED');
    }
  }
  // No bracket while committed < newest logEnd means committed is below every logEnd.
  const second = window[1];
  if (
    second !== undefined &&
    second.logEnd > oldest.logEnd &&
    second.observedAt > oldest.observedAt
  ) {
    const perMs = (second.logEnd - oldest.logEnd) / (second.observedAt - oldest.observedAt);
    return since(oldest.observedAt - (oldest.logEnd - committed) / perMs, now, 'EXTRAPOLATED');
  }
  return since(oldest.observedAt, now, 'LOWER_BOUND');
}

/** `estimateTimeLag` without its basis. */
export function estimateTimeLagSeconds(
  window: readonly OffsetObservation[],
  committed: number,
  now: number,
): number | null {
  return estimateTimeLag(window, committed, now)?.seconds ?? null;
}

function since(at: number, now: number, basis: TimeLagBasis): TimeLagEstimate {
  return { seconds: Math.max(0, Math.round(now - at)) / 1000, basis };
}
