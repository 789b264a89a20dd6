import { describe, expect, it } from 'vitest';
import {
  appendObservation,
  estimateTimeLag,
  estimateTimeLagSeconds,
  evaluatePartition,
  groupStatus,
  lastGoodOffset,
  type OffsetObservation,
  type PartitionEvaluation,
  type PartitionStatus,
} from '../../../../../functions/core/reconcile/offsets/offset-status.js';

const T0 = 1_700_000_000_000;
const STEP = 60_000;
/** Time of the i-th observation: 60 s apart from T0. */
const at = (i: number) => T0 + i * STEP;

/** [committed, logEnd, logStart = 0], one observation per row, 60 s apart. */
type Row = readonly [committed: number | null, logEnd: number, logStart?: number];
function win(...rows: Row[]): OffsetObservation[] {
  return rows.map(([committed, logEnd, logStart = 0], i) => ({
    observedAt: at(i),
    committed,
    logStart,
    logEnd,
  }));
}
/** Each observation saw a fresh commit made when it was read (commits keep coming). */
function recommitted(window: OffsetObservation[]): OffsetObservation[] {
  return window.map((o) => ({ ...o, committedAt: o.observedAt }));
}
/** Evaluates a full window of its own length at the newest observation (+ `later` ms). */
function judge(window: OffsetObservation[], later = 0, size = window.length) {
  return evaluatePartition(window, at(window.length - 1) + later, size);
}

describe('appendObservation', () => {
  it('keeps the newest N observations, oldest first', () => {
    let window: OffsetObservation[] = [];
    for (const o of win([1, 10], [2, 20], [3, 30], [4, 40], [5, 50], [6, 60], [7, 70])) {
      window = appendObservation(window, o, 5);
    }
    expect(window.map((o) => o.committed)).toEqual([3, 4, 5, 6, 7]);
  });

  it('puts a late observation in time order and does not change its input', () => {
    const window = win([1, 10], [3, 30]);
    const late = { observedAt: at(0) + 30_000, committed: 2, logStart: 0, logEnd: 20 };
    expect(appendObservation(window, late, 5).map((o) => o.committed)).toEqual([1, 2, 3]);
    expect(window).toHaveLength(2);
  });

  it('refuses a window size below 1', () => {
    expect(() => appendObservation([], win([1, 1])[0] as OffsetObservation, 0)).toThrow(RangeError);
    expect(() => evaluatePartition([], T0, 2.5)).toThrow(RangeError);
  });
});

describe('Tally checks on the newest observation (before Burrow)', () => {
  it('LOST: the commit is gone after earlier commits, with the last good offset and its lag', () => {
    const e = judge(win([100, 200], [200, 300], [null, 400]));
    expect(e).toEqual({
      status: 'LOST',
      complete: 1,
      // What the group has to read again once returned to 200: the log end is 400, and the
      // log ended at 200 at the first reading, 120 s ago.
      currentLag: 200,
      timeLagSeconds: 120,
      timeLagBasis: 'INTERPOLATED',
      lost: { lastGoodOffset: 200, lastGoodAt: at(1) },
    });
  });

  it('LOST: the last good offset is the one rewound from, not the re-consumed one', () => {
    const e = judge(win([300, 400], [50, 420], [null, 450]));
    expect(e.lost).toEqual({ lastGoodOffset: 300, lastGoodAt: at(0) });
  });

  it('LOST: with no good commit, the newest earlier commit is reported', () => {
    const e = judge(win([5, 100, 10], [null, 100, 10]));
    expect(e.status).toBe('LOST');
    expect(e.lost).toEqual({ lastGoodOffset: 5, lastGoodAt: at(0) });
  });

  it('no commit ever in the window: OK with no lag (nothing to judge)', () => {
    expect(judge(win([null, 100], [null, 900]), 10 * STEP)).toEqual({
      status: 'OK',
      complete: 1,
      currentLag: null,
      timeLagSeconds: null,
    });
  });

  it('OUT_OF_RANGE below log start: records deleted by retention before they were read', () => {
    const e = judge(win([100, 500, 0], [120, 600, 150]));
    expect(e.status).toBe('OUT_OF_RANGE');
    expect(e.outOfRange).toEqual({ side: 'BELOW_LOG_START', records: 30 });
    expect(e.currentLag).toBe(480);
  });

  it('OUT_OF_RANGE above log end, with zero current lag', () => {
    const e = judge(win([100, 100], [250, 200]));
    expect(e.status).toBe('OUT_OF_RANGE');
    expect(e.outOfRange).toEqual({ side: 'ABOVE_LOG_END', records: 50 });
    expect(e.currentLag).toBe(0);
    expect(e.timeLagSeconds).toBe(0);
  });

  it('REWIND with a count: the newest commit is below the previous one (seed 004)', () => {
    const e = judge(win([40_000, 40_100], [50_000, 50_100], [2_000, 50_200]));
    expect(e.status).toBe('REWIND');
    expect(e.rewind).toEqual({ from: 50_000, to: 2_000, recordsToReconsume: 48_000 });
    expect(e.currentLag).toBe(48_200);
  });

  it('REWIND on the newest step even where Burrow would say OK (lag was zero earlier)', () => {
    const e = judge(win([500, 500], [600, 600], [100, 600]));
    expect(e.status).toBe('REWIND');
    expect(e.rewind).toEqual({ from: 600, to: 100, recordsToReconsume: 500 });
  });

  it('REWIND counts from the newest earlier commit across a lost one', () => {
    const e = judge(win([300, 400], [null, 420], [100, 450]));
    expect(e.status).toBe('REWIND');
    expect(e.rewind).toEqual({ from: 300, to: 100, recordsToReconsume: 200 });
  });
});

describe("Burrow's rules (caching_test.go cases in our terms)", () => {
  // Lag 5000, 5050, ... 5200: never zero, never decreasing, and every logEnd is past the newest
  // commit (5000), so no reading shows the group caught up.
  const farBehind = () =>
    win([1000, 6000], [2000, 7050], [3000, 8100], [4000, 9150], [5000, 10_200]);

  it('#0 OK: lag was zero somewhere in the window, though it grows', () => {
    const e = judge(win([1000, 1000], [2000, 2050], [3000, 3100], [4000, 4150], [5000, 5200]));
    expect(e).toMatchObject({ status: 'OK', currentLag: 200 });
  });

  it('OK: lag always non-zero but it decreases somewhere', () => {
    const e = judge(win([1000, 1300], [2000, 2250], [3000, 3260], [4000, 4240], [5000, 5230]));
    expect(e).toMatchObject({ status: 'OK', currentLag: 230 });
  });

  it('WARN: commits advance, lag non-zero and never decreasing', () => {
    expect(judge(farBehind())).toMatchObject({ status: 'WARN', currentLag: 5200 });
  });

  it('#3 STOP: now − newest commit > newest − oldest commit, never caught up', () => {
    expect(judge(farBehind(), 4 * STEP + 1).status).toBe('STOP');
  });

  it('#1 not STOP when now − newest commit equals the window span exactly (→ WARN)', () => {
    expect(judge(farBehind(), 4 * STEP).status).toBe('WARN');
  });

  it('#8 OK when current lag is 0, though commits stopped long ago', () => {
    const e = judge(win([1000, 1050], [2000, 2000], [2000, 2000]), 60 * STEP);
    expect(e).toMatchObject({ status: 'OK', currentLag: 0 });
  });

  it('#8 OK when current lag is 0 even if every commit had lag (the log end moved back)', () => {
    // Without Burrow's current-lag gate this window would be WARN (lag 100, 100).
    const e = judge(win([1000, 1100], [2000, 2100], [2000, 2000]), 60 * STEP);
    expect(e).toMatchObject({ status: 'OK', currentLag: 0 });
  });

  it('#10 NOT STOP while a reading since the last commit shows it caught up (→ OK)', () => {
    // The group committed 200 and the log ended there when that was read; then it stopped
    // while the log grew. The caught-up reading is "recent": Burrow holds off STOP.
    const e = judge(win([100, 150], [200, 200], [200, 300], [200, 400], [200, 500]));
    expect(e).toMatchObject({ status: 'OK', currentLag: 300 });
  });

  it('#9 STOP when only readings before the last commit were at or below it (#290)', () => {
    // The log ended at 200 when the group had committed 100; it committed 200 later, when the
    // log had grown: it was never seen caught up after its last commit.
    const e = judge(win([100, 200], [200, 300], [200, 400], [200, 500]));
    expect(e).toMatchObject({ status: 'STOP', currentLag: 300 });
  });

  it('#9 STOP once the caught-up reading has left the window', () => {
    const window = appendObservation(
      win([100, 150], [200, 200], [200, 300], [200, 400], [200, 500]),
      { observedAt: at(5), committed: 200, logStart: 0, logEnd: 600 },
      4,
    );
    expect(evaluatePartition(window, at(5), 4)).toMatchObject({ status: 'STOP', currentLag: 400 });
  });

  it('#5 STALL: the same offset re-committed while lag grows', () => {
    const e = judge(recommitted(win([1000, 1100], [1000, 1150], [1000, 1200], [1000, 1300])));
    expect(e).toMatchObject({ status: 'STALL', currentLag: 300 });
  });

  it('#6 STALL: the same offset re-committed while lag stays the same', () => {
    const e = judge(recommitted(win([1000, 1100], [1000, 1100], [1000, 1100])));
    expect(e).toMatchObject({ status: 'STALL', currentLag: 100 });
  });

  it('#4 OK: a stall pattern, but lag was zero at the first commit', () => {
    const e = judge(recommitted(win([1000, 1000], [1000, 1050], [1000, 1100])));
    expect(e.status).toBe('OK');
  });

  it('an unchanged offset without commit times reads as STOP: re-commits are not visible', () => {
    expect(judge(win([1000, 1100], [1000, 1150], [1000, 1200], [1000, 1300])).status).toBe('STOP');
  });

  it('… and as STALL while a member owns the partition (its consumer is alive)', () => {
    const window = win([1000, 1100], [1000, 1150], [1000, 1200], [1000, 1300]);
    const e = evaluatePartition(window, at(3), 4, { owned: true });
    expect(e).toMatchObject({ status: 'STALL', currentLag: 300 });
  });

  it('a rewind that climbs back is ignored (checkIfRewindRecovered): the other rules decide', () => {
    // 3000 → 2000, then 4000 ≥ 3000: recovered. Lag never zero, offsets move, and lag fell
    // from 1250 to 300 at the last commit: nothing else applies → OK.
    const e = judge(win([1000, 1100], [2000, 2150], [3000, 3200], [2000, 3250], [4000, 4300]));
    expect(e.status).toBe('OK');
  });

  it('a rewind that has not climbed back yet is REWIND, with the step', () => {
    const e = judge(win([1000, 1100], [2000, 2150], [3000, 3200], [2000, 3250], [2500, 3300]));
    expect(e.status).toBe('REWIND');
    expect(e.rewind).toEqual({ from: 3000, to: 2000, recordsToReconsume: 1000 });
  });

  it('a rewind after a zero-lag moment is REWIND: the check comes before lag-zero', () => {
    const e = judge(win([1000, 1000], [2000, 2150], [3000, 3200], [2000, 3250], [2500, 3300]));
    expect(e.status).toBe('REWIND');
  });

  it('a rewind that climbs back is OK when lag was zero somewhere in the window', () => {
    const e = judge(win([1000, 1000], [2000, 2150], [3000, 3200], [2000, 3250], [4000, 4300]));
    expect(e.status).toBe('OK');
    expect(e.rewind).toBeUndefined();
  });

  it('an unrecovered rewind is forgotten once its step leaves the window', () => {
    let window = win([1000, 1100], [2000, 2150], [3000, 3200], [2000, 3250], [2100, 3300]);
    expect(evaluatePartition(window, at(4), 5).status).toBe('REWIND');
    window = appendObservation(window, { ...obs(5), committed: 2200, logEnd: 3300 }, 5);
    expect(evaluatePartition(window, at(5), 5).status).toBe('REWIND');
    window = appendObservation(window, { ...obs(6), committed: 2300, logEnd: 3300 }, 5);
    window = appendObservation(window, { ...obs(7), committed: 2400, logEnd: 3300 }, 5);
    expect(evaluatePartition(window, at(7), 5).status).toBe('OK');
  });
});

function obs(i: number): OffsetObservation {
  return { observedAt: at(i), committed: null, logStart: 0, logEnd: 0 };
}

describe('precedence when several rules apply', () => {
  it('OUT_OF_RANGE before the REWIND it came with (both details kept)', () => {
    const e = judge(win([5000, 6000, 0], [100, 6100, 1000]));
    expect(e.status).toBe('OUT_OF_RANGE');
    expect(e.outOfRange).toEqual({ side: 'BELOW_LOG_START', records: 900 });
    expect(e.rewind).toEqual({ from: 5000, to: 100, recordsToReconsume: 4900 });
  });

  it("Tally's newest-step REWIND before Burrow's STOP", () => {
    const window = win([1000, 9000], [2000, 9100], [1500, 9200]);
    expect(judge(window, 10 * STEP).status).toBe('REWIND');
  });

  it("Burrow's STOP before Burrow's REWIND (an older step down, not recovered)", () => {
    const window = win([1000, 5000], [3000, 5100], [2000, 5200], [2500, 5300]);
    expect(judge(window).status).toBe('REWIND');
    expect(judge(window, 3 * STEP + 1).status).toBe('STOP');
  });

  it('STALL before WARN (lag also never decreases)', () => {
    const e = judge(recommitted(win([1000, 1100], [1000, 1200])));
    expect(e.status).toBe('STALL');
  });
});

describe('complete and the window size', () => {
  it('a short window is partly complete, and is still judged (Burrow: minimum-complete 0)', () => {
    const e = evaluatePartition(win([1000, 6000], [2000, 7050]), at(1), 10);
    expect(e).toMatchObject({ status: 'WARN', complete: 0.2 });
  });

  it("below minimum-complete Burrow's rules are not applied (OK); at it they are", () => {
    const window = win([1000, 6000], [2000, 7050]);
    const settings = (minimumComplete: number) => ({ size: 10, minimumComplete });
    expect(evaluatePartition(window, at(1), settings(0.5)).status).toBe('OK');
    expect(evaluatePartition(window, at(1), settings(0.2)).status).toBe('WARN');
  });

  it("… while Tally's own checks on the newest reading still apply", () => {
    const window = win([1000, 6000], [500, 7050]);
    expect(evaluatePartition(window, at(1), { size: 10, minimumComplete: 1 }).status).toBe(
      'REWIND',
    );
  });

  it('allowed-lag: a lag at or below it counts as zero', () => {
    // Lag 1 everywhere (a transactional producer's marker) and commits stopped: STOP at 0.
    const window = win([1000, 1001], [1000, 1001], [1000, 1001]);
    expect(evaluatePartition(window, at(9), 3).status).toBe('STOP');
    expect(evaluatePartition(window, at(9), { size: 3, allowedLag: 1 }).status).toBe('OK');
    // Commits with lags (when made, midway between readings) 1 and 3; current lag 9.
    const behind = win([1000, 1005], [1010, 1017], [1020, 1029]);
    expect(evaluatePartition(behind, at(2), 3)).toMatchObject({ status: 'WARN', currentLag: 9 });
    expect(evaluatePartition(behind, at(2), { size: 3, allowedLag: 1 }).status).toBe('OK');
    expect(evaluatePartition(behind, at(2), { size: 3, allowedLag: 9 }).status).toBe('OK');
  });

  it('a full window is complete', () => {
    expect(evaluatePartition(win([1, 1], [2, 2]), at(1), 2).complete).toBe(1);
  });

  it('only the newest `size` observations are judged', () => {
    const window = win([1000, 1000], [2000, 7000], [3000, 8050], [4000, 9100]);
    expect(evaluatePartition(window, at(3), 4).status).toBe('OK');
    expect(evaluatePartition(window, at(3), 3).status).toBe('WARN');
  });
});

describe('groupStatus', () => {
  const part = (status: PartitionStatus, currentLag: number | null = 0, complete = 1) =>
    ({ status, complete, currentLag, timeLagSeconds: null }) satisfies PartitionEvaluation;

  it.each<PartitionStatus>(['STOP', 'STALL', 'REWIND', 'LOST', 'OUT_OF_RANGE'])(
    '%s makes the group ERR and is the worst partition',
    (status) => {
      const bad = part(status, 5);
      const r = groupStatus([part('OK', 900), part('WARN', 800), bad]);
      expect(r.status).toBe('ERR');
      expect(r.worst).toBe(bad);
    },
  );

  it('WARN makes the group WARN; all OK is OK', () => {
    const warn = part('WARN', 1);
    expect(groupStatus([part('OK'), warn])).toEqual({
      status: 'WARN',
      complete: 1,
      worst: warn,
    });
    expect(groupStatus([part('OK'), part('OK')]).status).toBe('OK');
  });

  it('worst follows severity: LOST > OUT_OF_RANGE > REWIND > STALL > STOP', () => {
    const order: PartitionStatus[] = ['STOP', 'STALL', 'REWIND', 'OUT_OF_RANGE', 'LOST'];
    const parts = order.map((s) => part(s));
    expect(groupStatus(parts).worst?.status).toBe('LOST');
    expect(groupStatus(parts.slice(0, 4).reverse()).worst?.status).toBe('OUT_OF_RANGE');
    expect(groupStatus(parts.slice(0, 2)).worst?.status).toBe('STALL');
  });

  it('equally bad partitions: the larger current lag is the worst, then the first', () => {
    const big = part('WARN', 70);
    expect(groupStatus([part('WARN', 10), big, part('WARN', null)]).worst).toBe(big);
    const first = part('STOP', 5);
    expect(groupStatus([first, part('STOP', 5)]).worst).toBe(first);
  });

  it('complete is the share of full partitions; no partitions is OK and 0 complete', () => {
    expect(groupStatus([part('OK'), part('OK', 0, 0.5)]).complete).toBe(0.5);
    expect(groupStatus([part('OK'), part('OK', 0, 1)]).complete).toBe(1);
    expect(groupStatus([])).toEqual({ status: 'OK', complete: 0, worst: undefined });
  });
});

describe('time lag', () => {
  // Log end 1000, 1600, 2200 at 0 s, 60 s, 120 s: 10 records a second.
  const growing = () => win([null, 1000], [null, 1600], [null, 2200]);
  const now = at(3);

  it('interpolates between the two readings whose logEnds bracket the commit', () => {
    // logEnd was 1300 at 30 s; now is 180 s.
    expect(estimateTimeLag(growing(), 1300, now)).toEqual({ seconds: 150, basis: 'INTERPOLATED' });
    expect(estimateTimeLagSeconds(growing(), 2050, now)).toBe(75);
  });

  it('a commit equal to a logEnd dates from that reading (the newest one when flat)', () => {
    expect(estimateTimeLagSeconds(growing(), 1600, now)).toBe(120);
    const flat = win([null, 1000], [null, 1000], [null, 1600]);
    expect(estimateTimeLagSeconds(flat, 1000, now)).toBe(120);
  });

  it('after the log end moved back (truncation), the newest crossing counts', () => {
    // 1300 lies between 1000→1600 and again between 1200→1800 (at 130 s); now is 240 s.
    const truncated = win([null, 1000], [null, 1600], [null, 1200], [null, 1800]);
    expect(estimateTimeLagSeconds(truncated, 1300, at(4))).toBe(110);
  });

  it('extrapolates back with the oldest two readings when below every logEnd', () => {
    // 300 records before the oldest reading at 10/s: 30 s before it.
    expect(estimateTimeLag(growing(), 700, now)).toEqual({ seconds: 210, basis: 'EXTRAPOLATED' });
  });

  it('falls back to now − oldest reading as a lower bound when there is no rate', () => {
    const flat = win([null, 1000], [null, 1000], [null, 1500]);
    expect(estimateTimeLag(flat, 700, now)).toEqual({ seconds: 180, basis: 'LOWER_BOUND' });
    expect(estimateTimeLag(win([null, 1000]), 700, now)).toEqual({
      seconds: 180,
      basis: 'LOWER_BOUND',
    });
  });

  it('is zero when caught up with the newest logEnd', () => {
    expect(estimateTimeLag(growing(), 2200, now)).toEqual({ seconds: 0, basis: 'CAUGHT_UP' });
    expect(estimateTimeLagSeconds(growing(), 2500, now)).toBe(0);
  });

  it('is null with no reading, and null in an evaluation without a commit', () => {
    expect(estimateTimeLagSeconds([], 10, now)).toBeNull();
    expect(judge(growing()).timeLagSeconds).toBeNull();
  });

  it('evaluatePartition reports it for the newest commit, with its basis', () => {
    const window = win([1000, 1000], [1300, 1600], [1300, 2200]);
    expect(evaluatePartition(window, now, 3)).toMatchObject({
      currentLag: 900,
      timeLagSeconds: 150,
      timeLagBasis: 'INTERPOLATED',
    });
  });
});

describe('lastGoodOffset', () => {
  it('is the newest commit inside the log, with when it was seen', () => {
    expect(lastGoodOffset(win([100, 200], [200, 300], [200, 400]))).toEqual({
      offset: 200,
      at: at(2),
    });
  });

  it('skips commits out of range and re-consumption below an earlier commit', () => {
    expect(lastGoodOffset(win([100, 200], [250, 240]))).toEqual({ offset: 100, at: at(0) });
    expect(lastGoodOffset(win([300, 400], [50, 420], [60, 430]))).toEqual({
      offset: 300,
      at: at(0),
    });
    expect(lastGoodOffset(win([300, 400], [50, 420], [350, 430]))).toEqual({
      offset: 350,
      at: at(2),
    });
  });

  it('is undefined without a good commit', () => {
    expect(lastGoodOffset(win([null, 10], [null, 20]))).toBeUndefined();
    expect(lastGoodOffset(win([5, 100, 10]))).toBeUndefined();
  });
});
