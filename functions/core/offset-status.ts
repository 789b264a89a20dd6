// Consumer-offset status of one group/topic/partition, judged on its window of observations:
// Burrow's rules (LinkedIn's lag checker) after three Tally checks on the newest observation.
//
// Burrow, linkedin/Burrow core/internal/evaluator/caching.go. evaluatePartitionStatus drops
// the empty slots at the start of the commit ring, sets `complete` = filled share of the ring
// and evaluates whenever it reaches minimum-complete (default 0, so always).
// calculatePartitionStatus, in the order of Burrow's current version (its comments: the rewind
// check "has to go above the isLagAlwaysNotZero check", and checkIfRewindRecovered):
//   0. current lag 0 → OK, nothing else is checked;
//   1. STOP: now − newest commit time > newest − oldest commit time (checkIfOffsetsStopped),
//      unless some recent broker log end ≤ the newest committed offset (checkIfRecentLagZero:
//      the group was caught up a few minutes ago);
//   2. REWIND: a commit lower than the one before it, unless a later commit climbed back to the
//      offset it fell from (checkIfOffsetsRewind + checkIfRewindRecovered: a rebalance that
//      re-commits an old offset and then catches up is not held against the consumer);
//   3. any commit in the ring had lag 0 → OK (isLagAlwaysNotZero);
//   4. STALL: every commit in the ring has the same offset;
//   5. WARN: lag never decreases from one commit to the next;
//   6. OK.
// Older Burrow versions (e.g. d327a3e) checked REWIND after lag-zero and without recovery.
// Current lag (storage/inmemory.go, fetchConsumer) = newest broker log end − newest commit,
// 0 when the commit is ahead. Burrow's ring holds commits; ours holds reconcile readings, so the
// commits are derived from them (see `commitsOf`), and Burrow's recent broker offsets are the
// window's logEnds: "recent" means within the window.
//
// Tally checks the newest observation first: LOST, OUT_OF_RANGE, REWIND with a count.

import {
  checkSize,
  estimateTimeLag,
  lastGoodOffset,
  type OffsetObservation,
  type TimeLagBasis,
} from './offset-window.js';

export type { OffsetObservation, TimeLagBasis, TimeLagEstimate } from './offset-window.js';
export {
  appendObservation,
  estimateTimeLag,
  estimateTimeLagSeconds,
  lastGoodOffset,
} from './offset-window.js';

export type PartitionStatus = 'OK' | 'WARN' | 'STOP' | 'STALL' | 'REWIND' | 'LOST' | 'OUT_OF_RANGE';
export type GroupStatus = 'OK' | 'WARN' | 'ERR';

export interface PartitionEvaluation {
  readonly status: PartitionStatus;
  /** The window is full (Burrow's `complete`); rules are applied either way. */
  readonly complete: boolean;
  /** logEnd − committed of the newest observation, never negative; null without a commit. */
  readonly currentLag: number | null;
  /** See `estimateTimeLag`; null without a commit. */
  readonly timeLagSeconds: number | null;
  readonly timeLagBasis?: TimeLagBasis;
  readonly rewind?: {
    readonly from: number;
    readonly to: number;
    readonly recordsToReconsume: number;
  };
  readonly lost?: { readonly lastGoodOffset: number; readonly lastGoodAt: number };
  readonly outOfRange?: {
    readonly side: 'BELOW_LOG_START' | 'ABOVE_LOG_END';
    readonly records: number;
  };
}

type Rewind = NonNullable<PartitionEvaluation['rewind']>;

/** One commit as Burrow's ring would hold it: offset, commit time, lag when first seen. */
interface Commit {
  readonly offset: number;
  readonly at: number;
  readonly lag: number;
}

/** Judges the newest `size` observations of `window` (oldest first) at time `now`. */
export function evaluatePartition(
  window: readonly OffsetObservation[],
  now: number,
  size: number,
): PartitionEvaluation {
  checkSize(size);
  const recent = window.slice(-size);
  const complete = recent.length >= size;
  const newest = recent[recent.length - 1];
  const previous = recent.slice(0, -1).findLast((o) => o.committed !== null);
  if (newest?.committed == null) {
    const none = { complete, currentLag: null, timeLagSeconds: null } as const;
    // No commit anywhere in the window: nothing to judge (Burrow: no offsets → OK).
    if (previous?.committed == null) return { status: 'OK', ...none };
    const good = lastGoodOffset(recent) ?? { offset: previous.committed, at: previous.observedAt };
    return { status: 'LOST', ...none, lost: { lastGoodOffset: good.offset, lastGoodAt: good.at } };
  }

  const committed = newest.committed;
  const currentLag = Math.max(0, newest.logEnd - committed);
  const lag = estimateTimeLag(recent, committed, now);
  const base = {
    complete,
    currentLag,
    timeLagSeconds: lag?.seconds ?? null,
    ...(lag ? { timeLagBasis: lag.basis } : {}),
  };

  const newestStep =
    previous?.committed != null && committed < previous.committed
      ? rewind(previous.committed, committed)
      : undefined;
  const withStep = newestStep ? { rewind: newestStep } : {};
  if (committed < newest.logStart) {
    const outOfRange = { side: 'BELOW_LOG_START', records: newest.logStart - committed } as const;
    return { status: 'OUT_OF_RANGE', ...base, outOfRange, ...withStep };
  }
  if (committed > newest.logEnd) {
    const outOfRange = { side: 'ABOVE_LOG_END', records: committed - newest.logEnd } as const;
    return { status: 'OUT_OF_RANGE', ...base, outOfRange, ...withStep };
  }
  if (newestStep) return { status: 'REWIND', ...base, rewind: newestStep };

  const commits = commitsOf(recent);
  const status = burrowStatus(commits, recent, currentLag, now);
  if (status !== 'REWIND') return { status, ...base };
  return { status, ...base, ...latestStepDown(commits) };
}

/**
 * Burrow's commit ring, from readings: one commit per change of committed offset, dated by
 * `committedAt` or else by the first observation showing it, with its lag at that observation
 * (Burrow fixes a commit's lag when it arrives). With `committedAt`, a re-commit of the same
 * offset is a commit of its own, which is what lets STALL (rule 4) be told from STOP (rule 1).
 */
function commitsOf(window: readonly OffsetObservation[]): Commit[] {
  const commits: Commit[] = [];
  for (const o of window) {
    if (o.committed === null) continue;
    const last = commits[commits.length - 1];
    const recommit = o.committedAt !== undefined && o.committedAt !== last?.at;
    if (last?.offset === o.committed && !recommit) continue;
    const at = o.committedAt ?? o.observedAt;
    commits.push({ offset: o.committed, at, lag: Math.max(0, o.logEnd - o.committed) });
  }
  return commits;
}

/** Burrow's calculatePartitionStatus, in its order (header comment). */
function burrowStatus(
  commits: readonly Commit[],
  window: readonly OffsetObservation[],
  currentLag: number,
  now: number,
): PartitionStatus {
  const first = commits[0];
  const last = commits[commits.length - 1];
  if (currentLag === 0 || first === undefined || last === undefined) return 'OK';
  const stopped = now - last.at > last.at - first.at;
  const recentlyCaughtUp = window.some((o) => o.logEnd <= last.offset);
  if (stopped && !recentlyCaughtUp) return 'STOP';
  const steps = commits.slice(1).map((c, i) => ({ c, before: commits[i] ?? c, i: i + 1 }));
  const unrecovered = steps.some(
    ({ c, before, i }) =>
      c.offset < before.offset &&
      !commits.slice(i + 1).some((later) => later.offset >= before.offset),
  );
  if (unrecovered) return 'REWIND';
  if (commits.some((c) => c.lag === 0)) return 'OK';
  if (commits.every((c) => c.offset === first.offset)) return 'STALL';
  if (steps.every(({ c, before }) => c.lag >= before.lag)) return 'WARN';
  return 'OK';
}

/** The newest step down among the commits, as the detail of Burrow's REWIND. */
function latestStepDown(commits: readonly Commit[]): { rewind?: Rewind } {
  for (let i = commits.length - 1; i > 0; i--) {
    const from = commits[i - 1]?.offset;
    const to = commits[i]?.offset;
    if (from !== undefined && to !== undefined && to < from) return { rewind: rewind(from, to) };
  }
  return {};
}

function rewind(from: number, to: number): Rewind {
  return { from, to, recordsToReconsume: from - to };
}

/** Worst first among equals of Burrow's constants (STOP < STALL < REWIND), Tally's on top. */
const SEVERITY: Readonly<Record<PartitionStatus, number>> = {
  OK: 0,
  WARN: 1,
  STOP: 2,
  STALL: 3,
  REWIND: 4,
  OUT_OF_RANGE: 5,
  LOST: 6,
};

/**
 * Group roll-up as Burrow's evaluateConsumerStatus: the worst partition (ties: the larger
 * current lag, then the first), every error status → ERR, WARN → WARN. Complete when every
 * partition is (Burrow: the complete share; 0 for no partitions).
 */
export function groupStatus(partitions: readonly PartitionEvaluation[]): {
  status: GroupStatus;
  complete: boolean;
  worst: PartitionEvaluation | undefined;
} {
  let worst: PartitionEvaluation | undefined;
  for (const p of partitions) {
    const rank = SEVERITY[p.status] - (worst ? SEVERITY[worst.status] : -1);
    if (rank > 0 || (rank === 0 && (p.currentLag ?? -1) > (worst?.currentLag ?? -1))) worst = p;
  }
  const severity = worst ? SEVERITY[worst.status] : 0;
  return {
    status: severity >= SEVERITY.STOP ? 'ERR' : severity === SEVERITY.WARN ? 'WARN' : 'OK',
    complete: partitions.length > 0 && partitions.every((p) => p.complete),
    worst,
  };
}
