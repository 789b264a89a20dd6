import { describe, expect, it } from 'vitest';
import { judgeHeld } from '../../../../../functions/core/reconcile/offsets/judge-held.js';
import type {
  OffsetObservation,
  PartitionEvaluation,
} from '../../../../../functions/core/reconcile/offsets/offset-status.js';

// A LOST or OUT_OF_RANGE finding outlives the window that showed it, until the group commits
// inside the log again or an admin acknowledges it.

const reading = (
  observedAt: number,
  committed: number | null,
  logEnd: number,
  logStart = 0,
): OffsetObservation => ({ observedAt, committed, logStart, logEnd });

const ok: PartitionEvaluation = { status: 'OK', complete: 1, currentLag: 0, timeLagSeconds: 0 };
const lost: PartitionEvaluation = {
  status: 'LOST',
  complete: 1,
  currentLag: null,
  timeLagSeconds: null,
};
const outOfRange: PartitionEvaluation = {
  status: 'OUT_OF_RANGE',
  complete: 1,
  currentLag: 5,
  timeLagSeconds: 1,
  outOfRange: { side: 'BELOW_LOG_START', records: 5 },
};

describe('judgeHeld', () => {
  it('holds a new LOST finding with the last good reading, measured from it', () => {
    const window = [reading(1_000, 40, 50), reading(2_000, null, 60)];
    const judged = judgeHeld(lost, window, {}, 5_000);
    expect(judged.held).toEqual({ status: 'LOST', since: 5_000, good: reading(1_000, 40, 50) });
    expect(judged.evaluation).toMatchObject({
      status: 'LOST',
      currentLag: 20,
      lost: { lastGoodOffset: 40, lastGoodAt: 1_000 },
    });
  });

  it('keeps the time the finding was first made across runs', () => {
    const window = [reading(1_000, 40, 50), reading(2_000, null, 60)];
    const first = judgeHeld(lost, window, {}, 5_000);
    const later = judgeHeld(lost, window, { ...(first.held && { held: first.held }) }, 9_000);
    expect(later.held?.since).toBe(5_000);
  });

  it('holds OUT_OF_RANGE as evaluated (not re-measured)', () => {
    const window = [reading(1_000, 3, 50, 8)];
    const judged = judgeHeld(outOfRange, window, {}, 2_000);
    expect(judged.evaluation).toBe(outOfRange);
    expect(judged.held).toMatchObject({ status: 'OUT_OF_RANGE', since: 2_000 });
  });

  it('keeps a held finding LOST after the window forgot it, while the commit is still gone', () => {
    const good = reading(1_000, 40, 50);
    const window = [reading(8_000, null, 70), reading(9_000, null, 80)];
    const judged = judgeHeld(
      ok,
      window,
      { held: { status: 'OUT_OF_RANGE', since: 2_000, good } },
      10_000,
    );
    expect(judged.held).toEqual({ status: 'LOST', since: 2_000, good });
    expect(judged.evaluation).toMatchObject({
      status: 'LOST',
      currentLag: 40,
      lost: { lastGoodOffset: 40, lastGoodAt: 1_000 },
    });
  });

  it('releases the finding once the group commits inside the log again', () => {
    const window = [reading(8_000, 75, 80)];
    const judged = judgeHeld(ok, window, { held: { status: 'LOST', since: 2_000 } }, 10_000);
    expect(judged).toEqual({ evaluation: ok });
  });

  it('reads an acknowledged finding OK while the commit stays the one acknowledged', () => {
    const window = [reading(1_000, null, 60)];
    const judged = judgeHeld(lost, window, { ack: { at: 3_000, committed: null } }, 4_000);
    expect(judged).toEqual({
      evaluation: { status: 'OK', complete: 1, currentLag: null, timeLagSeconds: null },
      ack: { at: 3_000, committed: null },
    });
    const onCommit = judgeHeld(
      outOfRange,
      [reading(1_000, 3, 50, 8)],
      {
        ack: { at: 3_000, committed: 3 },
      },
      4_000,
    );
    expect(onCommit.evaluation).toEqual({
      status: 'OK',
      complete: 1,
      currentLag: 5,
      timeLagSeconds: 1,
    });
  });

  it('judges again once the commit moved away from the acknowledged one', () => {
    const window = [reading(1_000, 40, 50), reading(2_000, null, 60)];
    const judged = judgeHeld(lost, window, { ack: { at: 500, committed: 40 } }, 5_000);
    expect(judged.ack).toBeUndefined();
    expect(judged.evaluation.status).toBe('LOST');
    expect(judged.held?.status).toBe('LOST');
  });
});
