import {
  lastGoodOffset,
  lostEvaluation,
  type OffsetObservation,
  type PartitionEvaluation,
} from './offset-status.js';

// LOST and OUT_OF_RANGE are findings about a group's commit, not about the window: they stay
// until the group commits again inside the log (a restore does exactly that), or an admin
// acknowledges them, however many runs pass and whatever the window forgets meanwhile. The
// partition's stored history keeps the finding and the last good reading it measures from
// (offset-changes.ts), so the restore plan and the lag routes still have it; a finding held
// longer than the retention is let go with the partition (reconcile-retention.ts's bound).

/** A LOST or OUT_OF_RANGE finding kept in a partition's history. */
export interface HeldFinding {
  readonly status: 'LOST' | 'OUT_OF_RANGE';
  /** When the finding was first made (epoch ms). */
  readonly since: number;
  /** The last good reading: what a restore returns the group to. */
  readonly good?: OffsetObservation;
}

/** An admin's acknowledgement: the finding on `committed` (null: no commit) is known. */
export interface Acknowledgement {
  readonly at: number;
  readonly committed: number | null;
}

export interface HeldState {
  readonly held?: HeldFinding;
  readonly ack?: Acknowledgement;
}

export interface HeldJudgement extends HeldState {
  readonly evaluation: PartitionEvaluation;
}

const isHeld = (e: PartitionEvaluation) => e.status === 'LOST' || e.status === 'OUT_OF_RANGE';

/** The newest good reading of the window (see `lastGoodOffset`), else the held one. */
function goodReading(window: readonly OffsetObservation[], held: HeldFinding | undefined) {
  const good = lastGoodOffset(window);
  const found = good && window.find((o) => o.observedAt === good.at && o.committed === good.offset);
  return found ?? held?.good;
}

/**
 * A run's evaluation of a partition with what its history holds: a LOST or OUT_OF_RANGE found
 * now or before stays until the newest reading has a commit inside the log; an acknowledged one
 * reads OK until the commit changes.
 */
export function judgeHeld(
  evaluation: PartitionEvaluation,
  window: readonly OffsetObservation[],
  state: HeldState,
  now: number,
): HeldJudgement {
  const committed = window[window.length - 1]?.committed ?? null;
  const ack = state.ack?.committed === committed ? state.ack : undefined;
  if (ack) return { evaluation: acknowledged(evaluation, committed), ack };
  if (isHeld(evaluation)) {
    const status = evaluation.status as HeldFinding['status'];
    const good = goodReading(window, state.held);
    const held: HeldFinding = { status, since: state.held?.since ?? now, ...(good && { good }) };
    return {
      evaluation: status === 'LOST' ? measured(evaluation, window, good, now) : evaluation,
      held,
    };
  }
  // Not LOST or OUT_OF_RANGE by the window: either the group committed inside the log again
  // (released), or the commit is still gone and the window no longer shows the one before it.
  if (state.held === undefined || committed !== null) return { evaluation };
  const held: HeldFinding = { ...state.held, status: 'LOST' };
  const lost = { ...evaluation, status: 'LOST' } as const;
  return { evaluation: measured(lost, window, held.good, now), held };
}

/** A LOST evaluation measured from the good reading, when there is one. */
function measured(
  lost: PartitionEvaluation,
  window: readonly OffsetObservation[],
  good: OffsetObservation | undefined,
  now: number,
): PartitionEvaluation {
  if (good?.committed == null) return lost;
  return lostEvaluation(
    window,
    { offset: good.committed, at: good.observedAt },
    now,
    lost.complete,
  );
}

/** An acknowledged finding reads OK, with the lag of whatever commit there is. */
function acknowledged(e: PartitionEvaluation, committed: number | null): PartitionEvaluation {
  if (committed === null) {
    return { status: 'OK', complete: e.complete, currentLag: null, timeLagSeconds: null };
  }
  const { lost: _lost, outOfRange: _range, rewind: _rewind, ...rest } = e;
  return { ...rest, status: 'OK' };
}
