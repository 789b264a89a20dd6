// Consumer-offset status of one group/topic/partition, judged on its window of readings:
// Tally's checks on the newest reading, then Burrow's rules (burrow-rules.ts) on the commits
// the window shows.
//
// Burrow's ring holds commits, each with the lag it had when it arrived; Tally's window holds
// reconcile's readings (committed offset and log offsets at a run). A reading is a commit only
// when its committed offset differs from the commit before it, or Kafka dated it (`committedAt`,
// a re-commit of the same offset then counts). A commit is dated by `committedAt`, else by the
// first reading that shows it. Its lag is the log end when it was made, read off the window's
// log-end history, minus its offset: at `committedAt`, else midway between the reading that
// first shows it and the one before (it was made in between; see `lagWhenMade`). A reading that
// shows an old commit again adds nothing: it says nothing about when the consumer committed,
// and judging it by the lag at that moment made a consumer that keeps falling behind flap
// between WARN and OK.
//
// Burrow's `complete` is the filled share of the ring; here the filled share of the window. With
// Burrow's `minimum-complete` (default 0) a less complete window is not judged by Burrow's rules.
// Burrow's recent broker offsets are the window's readings from the newest commit on: a log end
// at or below the newest commit there means the group was caught up after its last commit.
//
// Tally checks the newest reading first: LOST (the commit is gone), OUT_OF_RANGE (outside the
// log), REWIND of the newest step with a count. And where a member owns the partition, Burrow's
// STOP reads STALL: Kafka does not date commits, so a live consumer re-committing the same offset
// looks like one that stopped committing, but its owner shows it alive.

import { type BurrowCommit, burrowPartitionStatus } from './burrow-rules.js';
import {
  checkSize,
  estimateTimeLag,
  lastGoodOffset,
  type OffsetObservation,
  type TimeLagBasis,
} from './offset-window.js';

export type { OffsetObservation, TimeLagBasis } from './offset-window.js';
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
  /** Burrow's `complete`: the filled share of the window, 0 to 1. */
  readonly complete: number;
  /**
   * logEnd − committed of the newest reading, never negative. While LOST, logEnd − the last good
   * offset: what the group has to read once restored. Null without any commit to measure from.
   */
  readonly currentLag: number | null;
  /** See `estimateTimeLag`, from the same offset as `currentLag`; null without one. */
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

/** How a window is judged: Burrow's `intervals`, `allowed-lag` and `minimum-complete`. */
export interface EvaluationSettings {
  readonly size: number;
  readonly allowedLag?: number;
  readonly minimumComplete?: number;
}

/** What the window does not say: whether a group member owns the partition now. */
export interface PartitionContext {
  readonly owned?: boolean;
}

/** Judges the newest `size` readings of `window` (oldest first) at time `now`. */
export function evaluatePartition(
  window: readonly OffsetObservation[],
  now: number,
  sizeOrSettings: number | EvaluationSettings,
  context: PartitionContext = {},
): PartitionEvaluation {
  const settings = typeof sizeOrSettings === 'number' ? { size: sizeOrSettings } : sizeOrSettings;
  const { size, allowedLag = 0, minimumComplete = 0 } = settings;
  checkSize(size);
  const recent = window.slice(-size);
  const complete = Math.min(1, recent.length / size);
  const newest = recent[recent.length - 1];
  const previous = recent.slice(0, -1).findLast((o) => o.committed !== null);
  if (newest?.committed == null) {
    // No commit anywhere in the window: nothing to judge (Burrow: no offsets → OK).
    if (previous?.committed == null) {
      return { status: 'OK', complete, currentLag: null, timeLagSeconds: null };
    }
    const good = lastGoodOffset(recent) ?? { offset: previous.committed, at: previous.observedAt };
    return lostEvaluation(recent, good, now, complete);
  }

  const committed = newest.committed;
  const currentLag = Math.max(0, newest.logEnd - committed);
  const base = { complete, currentLag, ...timeLagOf(recent, committed, now) };

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
  if (complete < minimumComplete) return { status: 'OK', ...base };

  const commits = commitsOf(recent);
  const since = commits[commits.length - 1]?.at ?? newest.observedAt;
  // Readings taken after the newest commit: the one that first showed it (the commit came before
  // the run read it) and later ones; a Kafka-dated commit's own reading is its lag, not a look.
  const after = (o: OffsetObservation) =>
    o.observedAt > since || (o.observedAt === since && o.committedAt === undefined);
  const status = burrowPartitionStatus({
    commits,
    recentLogEnds: recent.filter(after).map((o) => o.logEnd),
    currentLag,
    now,
    allowedLag,
  });
  if (status === 'STOP' && context.owned) return { status: 'STALL', ...base };
  if (status !== 'REWIND') return { status, ...base };
  return { status, ...base, ...latestStepDown(commits) };
}

/** A LOST partition, measured from its last good offset (what a restore returns it to). */
export function lostEvaluation(
  window: readonly OffsetObservation[],
  good: { readonly offset: number; readonly at: number },
  now: number,
  complete: number,
): PartitionEvaluation {
  const newest = window[window.length - 1];
  const currentLag = newest ? Math.max(0, newest.logEnd - good.offset) : null;
  return {
    status: 'LOST',
    complete,
    currentLag,
    ...(currentLag === null ? { timeLagSeconds: null } : timeLagOf(window, good.offset, now)),
    lost: { lastGoodOffset: good.offset, lastGoodAt: good.at },
  };
}

function timeLagOf(window: readonly OffsetObservation[], offset: number, now: number) {
  const lag = estimateTimeLag(window, offset, now);
  return { timeLagSeconds: lag?.seconds ?? null, ...(lag ? { timeLagBasis: lag.basis } : {}) };
}

/**
 * The window's commits as Burrow's ring would hold them (header comment): one per change of
 * committed offset, or per Kafka-dated commit; lag from the log end at the commit's date.
 */
export function commitsOf(window: readonly OffsetObservation[]): BurrowCommit[] {
  const commits: BurrowCommit[] = [];
  window.forEach((o, i) => {
    if (o.committed === null) return;
    const last = commits[commits.length - 1];
    const recommit = o.committedAt !== undefined && o.committedAt !== last?.at;
    if (last?.offset === o.committed && !recommit) return;
    commits.push({
      offset: o.committed,
      at: o.committedAt ?? o.observedAt,
      lag: lagWhenMade(window, i),
    });
  });
  return withOldestLag(commits, window);
}

/**
 * The oldest reading's commit, of unknown lag (`lagWhenMade`), given a lag when the later commits
 * know fewer than two: there is then no trend without it, and one known lag alone reads as never
 * decreasing, so a lag falling from 1,900 to 1,800 read WARN where Burrow, which knows every
 * commit's lag, says OK. Its lag is the one that reading shows (as /lag shows it) less half the
 * log's growth to the next reading: the same half step back as the next commit's midway lag, so
 * a lag growing from 1,800 to 1,900 still reads WARN. With a trend of their own the later
 * commits decide: the reading's lag also counts what was produced after the commit, and a run
 * landing between production and the next commit made a consumer that keeps falling behind
 * flap to OK.
 */
function withOldestLag(
  commits: BurrowCommit[],
  window: readonly OffsetObservation[],
): BurrowCommit[] {
  const first = commits[0];
  const [oldest, next] = window;
  if (first === undefined || first.lag !== null || oldest?.committed !== first.offset) {
    return commits;
  }
  if (commits.filter((c) => c.lag !== null).length >= 2) return commits;
  const growth = next ? Math.max(0, next.logEnd - oldest.logEnd) : 0;
  const lag = Math.max(0, Math.round(oldest.logEnd - growth / 2) - first.offset);
  return [{ ...first, lag }, ...commits.slice(1)];
}

/**
 * The lag of the commit the `i`-th reading shows, when it was made. Kafka-dated: the log end at
 * that date. Else it was made after the reading before (which did not show it) and before this
 * one, so midway; the log end at this reading alone would count what was produced after the
 * commit: a run landing between a burst of production and the consumer's next commit would
 * inflate that commit's lag, and the next commit's would drop. With no reading before it in the
 * window, its lag is unknown (Burrow's nil lag), unless this reading shows it caught up, which
 * it was then when made too (but see `withOldestLag`).
 */
function lagWhenMade(window: readonly OffsetObservation[], i: number): number | null {
  const shown = window[i];
  if (shown?.committed == null) return null;
  const before = window[i - 1];
  let logEnd: number | null;
  if (shown.committedAt !== undefined) logEnd = logEndAt(window, shown.committedAt);
  else if (before !== undefined) {
    logEnd = logEndAt(window, (before.observedAt + shown.observedAt) / 2);
  } else logEnd = shown.logEnd <= shown.committed ? shown.logEnd : null;
  return logEnd === null ? null : Math.max(0, logEnd - shown.committed);
}

/**
 * The log end at time `at`, interpolated between the readings around it (the newest reading's
 * after it); null before the oldest reading, where the window does not know it.
 */
export function logEndAt(window: readonly OffsetObservation[], at: number): number | null {
  let before: OffsetObservation | undefined;
  for (const o of window) {
    if (o.observedAt === at) return o.logEnd;
    if (o.observedAt < at) {
      before = o;
      continue;
    }
    if (before === undefined) return null;
    const share = (at - before.observedAt) / (o.observedAt - before.observedAt);
    return Math.round(before.logEnd + share * (o.logEnd - before.logEnd));
  }
  return before?.logEnd ?? null;
}

/** The newest step down among the commits, as the detail of Burrow's REWIND. */
function latestStepDown(commits: readonly BurrowCommit[]): { rewind?: Rewind } {
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
 * current lag, then the first), every error status → ERR, WARN → WARN. `complete` is the share
 * of partitions whose window is full (Burrow: 0 for no partitions).
 */
export function groupStatus(partitions: readonly PartitionEvaluation[]): {
  status: GroupStatus;
  complete: number;
  worst: PartitionEvaluation | undefined;
} {
  let worst: PartitionEvaluation | undefined;
  let full = 0;
  for (const p of partitions) {
    const rank = SEVERITY[p.status] - (worst ? SEVERITY[worst.status] : -1);
    if (rank > 0 || (rank === 0 && (p.currentLag ?? -1) > (worst?.currentLag ?? -1))) worst = p;
    if (p.complete >= 1) full++;
  }
  const severity = worst ? SEVERITY[worst.status] : 0;
  return {
    status: severity >= SEVERITY.STOP ? 'ERR' : severity === SEVERITY.WARN ? 'WARN' : 'OK',
    complete: partitions.length === 0 ? 0 : full / partitions.length,
    worst,
  };
}
