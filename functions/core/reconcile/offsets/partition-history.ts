import type { Acknowledgement, HeldFinding, HeldJudgement } from './judge-held.js';
import { appendObservation, type OffsetObservation } from './offset-window.js';

// A partition's stored window holds only the observations where something moved, so a run in
// which nothing moved writes nothing. The window a run judges is the stored one with this run's
// observation appended: an unchanged partition reads as its last change plus "still so, now",
// which is what Burrow's ring holds for a consumer that stopped committing (commits are dated
// by when each offset was first seen). Between two stored changes the log end is interpolated
// over the whole quiet time, so a time lag across a quiet log reads high, never low.

/** One partition's stored history. */
export interface PartitionHistory {
  /** Observations where something moved, oldest first, at most the window size. */
  readonly changes: readonly OffsetObservation[];
  /** When a run first found it unobserved (deleted topic, unreadable group); absent while seen. */
  readonly goneAt?: number;
  /** A LOST or OUT_OF_RANGE finding that stays until released (offset-holds.ts). */
  readonly held?: HeldFinding;
  /** An admin's acknowledgement of such a finding. */
  readonly ack?: Acknowledgement;
}

/** What one run makes of a partition's history. */
export interface PartitionStep {
  /** The window to judge: the stored changes and this run's observation. */
  readonly window: readonly OffsetObservation[];
  /** What to store next; undefined when the partition is retired (or was never worth storing). */
  readonly next: PartitionHistory | undefined;
  /** Whether `next` differs from what is stored, i.e. the partition's item must be written. */
  readonly changed: boolean;
}

/** Something moved between two observations (time apart): a write is due. */
export function moved(before: OffsetObservation, after: OffsetObservation): boolean {
  return (
    before.committed !== after.committed ||
    before.logStart !== after.logStart ||
    before.logEnd !== after.logEnd ||
    (before.committedAt === undefined) !== (after.committedAt === undefined)
  );
}

/**
 * One run's step for a partition. Kept while it holds a commit (something to judge, a last good
 * offset to restore), a member owns it (it will commit soon), or it holds a finding younger than
 * `heldForMs`; else retired. An unowned partition without a commit and no finding held counts
 * as moved on every run: its window fills with "no commit" readings and is then retired.
 */
export function stepPartition(
  stored: PartitionHistory | undefined,
  observation: OffsetObservation,
  owned: boolean,
  size: number,
  heldForMs = Number.POSITIVE_INFINITY,
): PartitionStep {
  const changes = stored?.changes ?? [];
  const window = appendObservation(changes, observation, size);
  const newest = changes[changes.length - 1];
  const holding =
    stored?.held !== undefined && observation.observedAt - stored.held.since < heldForMs;
  const countdown = observation.committed === null && !owned && !holding;
  const isChange = newest === undefined || countdown || moved(newest, observation);
  const kept = isChange ? window : changes;
  if (!owned && !holding && !kept.some((o) => o.committed !== null)) {
    return { window, next: undefined, changed: stored !== undefined };
  }
  const { goneAt: _gone, changes: _changes, ...marks } = stored ?? {};
  return {
    window,
    next: { changes: kept, ...marks },
    changed: isChange || stored?.goneAt !== undefined,
  };
}

/**
 * The history with a run's held finding and acknowledgement (offset-holds.ts) recorded, and
 * whether that changed it.
 */
export function recordHeld(
  history: PartitionHistory,
  judged: Pick<HeldJudgement, 'held' | 'ack'>,
): { next: PartitionHistory; changed: boolean } {
  const { held: _held, ack: _ack, ...rest } = history;
  const next: PartitionHistory = {
    ...rest,
    ...(judged.held && { held: judged.held }),
    ...(judged.ack && { ack: judged.ack }),
  };
  const changed =
    JSON.stringify([history.held, history.ack]) !== JSON.stringify([next.held, next.ack]);
  return { next, changed };
}

/**
 * Partitions per stored item, so an item stays far under DynamoDB's 400 KB whatever the window
 * size (an observation is under 100 bytes stored): ~50 KB at most.
 */
export function partitionsPerItem(windowSize: number): number {
  return Math.max(1, Math.floor(500 / windowSize));
}

/** The stored item a new partition's history goes to: `topic#w<chunk>`. */
export function historyItemId(topic: string, partition: number, windowSize: number): string {
  return `${topic}#w${Math.floor(partition / partitionsPerItem(windowSize))}`;
}
