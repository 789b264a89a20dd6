import { describe, expect, it } from 'vitest';
import {
  commitsOf,
  evaluatePartition,
  type OffsetObservation,
  type PartitionStatus,
} from '../../../../../functions/core/reconcile/offsets/offset-status.js';
import { stepPartition } from '../../../../../functions/core/reconcile/offsets/partition-history.js';

// Commits, not readings: what reconcile's readings make of a consumer's commits, on a simulated
// partition read at chosen moments, through the stored window (offset-changes.ts) as reconcile
// keeps it.

const T0 = Date.parse('2026-02-01T00:00:00Z');
const S = 1000;

/** 20 records produced at each whole second; the consumer commits 5 further at .3 s. */
function fallingBehind(t: number) {
  const second = Math.floor(t);
  return {
    logEnd: 50 + 20 * (second + 1),
    committed: 5 * second + (t - second >= 0.3 ? 5 : 0),
  };
}

/** Statuses of runs at `times` (seconds), with an owner, window `size`. */
function runAt(
  times: readonly number[],
  partition: (t: number) => { logEnd: number; committed: number | null },
  size: number,
  owned = true,
): PartitionStatus[] {
  let stored: ReturnType<typeof stepPartition>['next'];
  const statuses: PartitionStatus[] = [];
  for (const t of times) {
    const reading: OffsetObservation = { observedAt: T0 + t * S, logStart: 0, ...partition(t) };
    const step = stepPartition(stored, reading, owned, size);
    stored = step.next;
    statuses.push(evaluatePartition(step.window, reading.observedAt, size, { owned }).status);
  }
  return statuses;
}

describe('a consumer that commits every second while falling behind', () => {
  // After commit (.5), between production and commit (.1), a few seconds apart and close together.
  const times = [1.5, 3.5, 4.1, 4.5, 7.1, 7.5, 8.05, 10.6, 11.1, 11.4, 14.2, 14.5, 15.1, 18.5];

  it('reads WARN in every run once two commits are seen', () => {
    const statuses = runAt(times, fallingBehind, 10);
    expect(statuses.slice(1)).toEqual(times.slice(1).map(() => 'WARN'));
  });

  it('the same runs judged by the lag each run saw would flap (what the readings alone say)', () => {
    const lags = times.map((t) => {
      const { logEnd, committed } = fallingBehind(t);
      return logEnd - committed;
    });
    const decreases = lags.slice(1).filter((lag, i) => lag < (lags[i] ?? 0));
    expect(decreases.length).toBeGreaterThan(0);
  });

  it('a reading that shows the same commit again adds no commit', () => {
    const window: OffsetObservation[] = [1.5, 1.7, 1.9, 2.5].map((t) => ({
      observedAt: T0 + t * S,
      logStart: 0,
      ...fallingBehind(t),
    }));
    expect(commitsOf(window).map((c) => c.offset)).toEqual([10, 15]);
  });
});

describe('a caught-up consumer that dies', () => {
  /** Caught up, committing every second until 10 s; then production goes on, 20 a second. */
  const dies = (t: number) => {
    const end = 50 + 20 * Math.floor(t);
    return { logEnd: end, committed: t < 10 ? end : 50 + 20 * 10 };
  };

  it('turns STOP within one window of runs, and stays STOP', () => {
    const times = Array.from({ length: 30 }, (_, i) => 1.5 + i);
    const statuses = runAt(times, dies, 10, false);
    // Its last commit (250) was first read at 10.5 s (run 9), caught up: OK while that
    // reading is in the window (Burrow's recent-lag-zero), STOP once it has left.
    expect(statuses.slice(0, 10).every((s) => s === 'OK')).toBe(true);
    const firstStop = statuses.indexOf('STOP');
    expect(firstStop).toBeGreaterThan(9);
    expect(firstStop - 9).toBeLessThanOrEqual(10);
    expect(statuses.slice(firstStop).every((s) => s === 'STOP')).toBe(true);
  });
});

describe("the oldest reading's commit", () => {
  /** Readings 60 s apart: [committed, logEnd]. */
  const readings = (...rows: [number, number][]): OffsetObservation[] =>
    rows.map(([committed, logEnd], i) => ({
      observedAt: T0 + i * 60 * S,
      committed,
      logStart: 0,
      logEnd,
    }));

  it('has a lag, not an unknown one, while no later trend is known', () => {
    // The 1,900 the reading shows, less half the log's growth (100) to the next reading.
    expect(commitsOf(readings([1000, 2900], [1200, 3000]))[0]?.lag).toBe(1850);
  });

  it('a lag falling from 1,900 to 1,800 reads OK, as Burrow says, not WARN', () => {
    const window = readings([1000, 2900], [1200, 3000]);
    const e = evaluatePartition(window, window[1]?.observedAt ?? 0, 10, { owned: true });
    expect(e).toMatchObject({ status: 'OK', currentLag: 1800 });
  });

  it('a lag growing from 1,800 to 1,900 still reads WARN', () => {
    const window = readings([1000, 2800], [1200, 3100]);
    const e = evaluatePartition(window, window[1]?.observedAt ?? 0, 10, { owned: true });
    expect(e).toMatchObject({ status: 'WARN', currentLag: 1900 });
  });
});
