import { describe, expect, it } from 'vitest';
import {
  appendObservation,
  checkSize,
  estimateTimeLag,
  estimateTimeLagSeconds,
  lastGoodOffset,
  type OffsetObservation,
} from '../../../../../functions/core/reconcile/offsets/offset-window.js';

const at = (
  observedAt: number,
  committed: number | null,
  logEnd: number,
  logStart = 0,
): OffsetObservation => ({ observedAt, committed, logStart, logEnd });

describe('appendObservation', () => {
  it('keeps the newest `size` readings in time order, a late one put in its place', () => {
    let window: OffsetObservation[] = [];
    for (const t of [10, 20, 40]) window = appendObservation(window, at(t, t, t), 3);
    window = appendObservation(window, at(30, 30, 30), 3);
    expect(window.map((o) => o.observedAt)).toEqual([20, 30, 40]);
    window = appendObservation(window, at(50, 50, 50), 3);
    expect(window.map((o) => o.observedAt)).toEqual([30, 40, 50]);
  });

  it('does not change the window it was given', () => {
    const window = [at(1, 1, 1)];
    appendObservation(window, at(2, 2, 2), 5);
    expect(window).toEqual([at(1, 1, 1)]);
  });

  it('refuses a size that is not a positive integer', () => {
    for (const size of [0, -1, 1.5, Number.NaN]) {
      expect(() => checkSize(size)).toThrow(RangeError);
      expect(() => appendObservation([], at(1, 1, 1), size)).toThrow(RangeError);
    }
    expect(() => checkSize(1)).not.toThrow();
  });
});

describe('lastGoodOffset', () => {
  it('is the newest commit inside the log', () => {
    expect(lastGoodOffset([at(1, 5, 10), at(2, 8, 12)])).toEqual({ offset: 8, at: 2 });
  });

  it('skips readings without a commit and commits outside the log', () => {
    // 30 is above the log end: not good; 2 is below the log start (5): not good either.
    const window = [at(1, 6, 10, 5), at(2, null, 11, 5), at(3, 30, 12, 5), at(4, 2, 13, 5)];
    expect(lastGoodOffset(window)).toEqual({ offset: 6, at: 1 });
  });

  it('keeps the offset a group was rewound from: re-consumption is not good', () => {
    const window = [at(1, 100, 120), at(2, 110, 130), at(3, 40, 140), at(4, 60, 150)];
    expect(lastGoodOffset(window)).toEqual({ offset: 110, at: 2 });
  });

  it('is undefined without any good commit', () => {
    expect(lastGoodOffset([])).toBeUndefined();
    expect(lastGoodOffset([at(1, null, 10)])).toBeUndefined();
  });
});

describe('estimateTimeLag', () => {
  const now = 100_000;

  it('is null for an empty window', () => {
    expect(estimateTimeLag([], 5, now)).toBeNull();
    expect(estimateTimeLagSeconds([], 5, now)).toBeNull();
  });

  it('is 0 when the commit is at or past the newest log end', () => {
    const window = [at(10_000, 0, 50), at(20_000, 0, 100)];
    expect(estimateTimeLag(window, 100, now)).toEqual({ seconds: 0, basis: 'CAUGHT_UP' });
  });

  it('interpolates between the two readings whose log ends bracket the commit', () => {
    // The log end went 100 → 200 between 60 s and 80 s: offset 150 was written at 70 s.
    const window = [at(40_000, 0, 0), at(60_000, 0, 100), at(80_000, 0, 200)];
    expect(estimateTimeLag(window, 150, now)).toEqual({ seconds: 30, basis: 'INTERPOLATED' });
    expect(estimateTimeLagSeconds(window, 150, now)).toBe(30);
  });

  it('takes the newest bracket when the log end sat at the commit for a while', () => {
    const window = [at(10_000, 0, 50), at(20_000, 0, 50), at(30_000, 0, 60)];
    // 50 ≤ 50 < 60 between 20 s and 30 s, not the older 10 s reading.
    expect(estimateTimeLag(window, 50, now)).toEqual({ seconds: 80, basis: 'INTERPOLATED' });
  });

  it("carries the oldest two readings' rate back below every log end", () => {
    // 10 records a second between 50 s and 60 s; offset 400 is 100 records before 500: at 40 s.
    const window = [at(50_000, 0, 500), at(60_000, 0, 600)];
    expect(estimateTimeLag(window, 400, now)).toEqual({ seconds: 60, basis: 'EXTRAPOLATED' });
  });

  it('is a lower bound (now − the oldest reading) when there is no rate to carry back', () => {
    expect(estimateTimeLag([at(50_000, 0, 500)], 400, now)).toEqual({
      seconds: 50,
      basis: 'LOWER_BOUND',
    });
    const flat = [at(50_000, 0, 500), at(60_000, 0, 500), at(70_000, 0, 700)];
    expect(estimateTimeLag(flat, 400, now)).toEqual({ seconds: 50, basis: 'LOWER_BOUND' });
  });

  it('is never negative (a reading dated after now)', () => {
    const window = [at(150_000, 0, 100), at(160_000, 0, 200)];
    expect(estimateTimeLag(window, 150, now)).toEqual({ seconds: 0, basis: 'INTERPOLATED' });
  });
});
