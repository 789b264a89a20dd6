import { describe, expect, it } from 'vitest';
import {
  type BurrowCommit,
  burrowPartitionStatus,
  isLagAlwaysNotZero,
  lagNotDecreasing,
  offsetsStalled,
  offsetsStopped,
  recentLagZero,
  rewindIndex,
  rewindRecovered,
} from '../../../../../functions/core/reconcile/offsets/burrow-rules.js';
import {
  evaluatePartition,
  type OffsetObservation,
} from '../../../../../functions/core/reconcile/offsets/offset-status.js';

// Burrow's evaluator table (linkedin/Burrow core/internal/evaluator/caching_test.go, the
// `tests` slice: cases 0–11), as data, fed through Tally's evaluator twice: its rule stage
// (burrow-rules.ts, commits as Burrow's ring holds them) and, where a case can be written as
// reconcile readings, the whole evaluatePartition. Burrow gives timestamps in ms and timeNow in s.
//
// Deliberate differences (README, "Burrow compatibility"):
// - case 7: the stored table predates checkIfRewindRecovered and expects REWIND; under the current
//   caching.go the step 3000 → 2000 is recovered by the later 4000 (≥ 3000), so the other rules
//   decide: lag fell from 1250 to 300 → OK. Case 7b keeps the REWIND path: it never climbs back.
// - case 8 has a current lag of 0 beside a broker offset 250 past the last commit; readings carry
//   both together, so its window's newest log end is the last commit (lag 0).
// - case 11 has commits of unknown lag (nil) between known ones, which a window of readings
//   cannot hold (a commit's lag comes from the log-end history): rule stage only.

type Row = readonly [offset: number, timestamp: number, lag: number | null];

interface Case {
  readonly name: string;
  readonly commits: readonly Row[];
  /** Newest first, as in the table. */
  readonly brokerOffsets: readonly number[];
  readonly currentLag: number;
  readonly timeNow: number;
  readonly rules: {
    readonly lagAlwaysNotZero: boolean;
    readonly rewind: boolean;
    readonly stopped: boolean;
    readonly stalled: boolean;
    readonly lagNotDecreasing: boolean;
    readonly recentLagZero: boolean;
  };
  readonly status: 'OK' | 'WARN' | 'STOP' | 'STALL' | 'REWIND';
  /** Whether the whole evaluatePartition can be fed this case (header comment). */
  readonly window: 'as-is' | 'current-lag-from-readings' | 'rule-stage-only';
}

/** Five commits 100 s apart from 100 s, offsets `offsets`, lags `lags`. */
const five = (offsets: readonly number[], lags: readonly number[]): Row[] =>
  offsets.map((offset, i) => [offset, (i + 1) * 100_000, lags[i] ?? null]);
const ascending = [1000, 2000, 3000, 4000, 5000];
const same = [1000, 1000, 1000, 1000, 1000];
/** Case 9/10's fifteen commits, one a second, all at zero lag. */
const oneASecond: Row[] = [
  356, 1362, 2366, 3367, 4370, 5373, 6378, 7379, 8383, 9383, 10_383, 11_388, 12_391, 13_394, 14_397,
].map((ms, i) => [792_748_079 + i, 1_512_224_618_000 + ms, 0]);
const rules = (
  lagAlwaysNotZero: boolean,
  rewind: boolean,
  stopped: boolean,
  stalled: boolean,
  notDecreasing: boolean,
  recent: boolean,
) => ({
  lagAlwaysNotZero,
  rewind,
  stopped,
  stalled,
  lagNotDecreasing: notDecreasing,
  recentLagZero: recent,
});

const CASES: readonly Case[] = [
  {
    name: '0 OK: zero lag somewhere',
    commits: five(ascending, [0, 50, 100, 150, 200]),
    brokerOffsets: [5200],
    currentLag: 200,
    timeNow: 600,
    rules: rules(false, false, false, false, true, false),
    status: 'OK',
    window: 'as-is',
  },
  {
    name: '1 OK: time since last commit equals the span, not greater',
    commits: five(ascending, [0, 50, 100, 150, 200]),
    brokerOffsets: [5200],
    currentLag: 200,
    timeNow: 900,
    rules: rules(false, false, false, false, true, false),
    status: 'OK',
    window: 'as-is',
  },
  {
    name: '2 STOP: stopped long enough, though lag was zero at the start (#290)',
    commits: five(ascending, [0, 50, 100, 150, 200]),
    brokerOffsets: [5200],
    currentLag: 200,
    timeNow: 1000,
    rules: rules(false, false, true, false, true, false),
    status: 'STOP',
    window: 'as-is',
  },
  {
    name: '3 STOP: lag always non-zero as well',
    commits: five(ascending, [50, 100, 150, 200, 250]),
    brokerOffsets: [5250],
    currentLag: 250,
    timeNow: 1000,
    rules: rules(true, false, true, false, true, false),
    status: 'STOP',
    window: 'as-is',
  },
  {
    name: '4 OK: a stall, but lag was zero at the first commit',
    commits: five(same, [0, 50, 100, 150, 200]),
    brokerOffsets: [1200],
    currentLag: 200,
    timeNow: 600,
    rules: rules(false, false, false, true, true, false),
    status: 'OK',
    window: 'as-is',
  },
  {
    name: '5 STALL: the same offset with lag always non-zero',
    commits: five(same, [100, 150, 200, 250, 300]),
    brokerOffsets: [1300],
    currentLag: 300,
    timeNow: 600,
    rules: rules(true, false, false, true, true, false),
    status: 'STALL',
    window: 'as-is',
  },
  {
    name: '6 STALL: even when the lag stays the same',
    commits: five(same, [100, 100, 100, 100, 100]),
    brokerOffsets: [1100],
    currentLag: 100,
    timeNow: 600,
    rules: rules(true, false, false, true, true, false),
    status: 'STALL',
    window: 'as-is',
  },
  {
    name: '7 OK (stored table: REWIND): the rewind is recovered by a later commit',
    commits: five([1000, 2000, 3000, 2000, 4000], [100, 150, 200, 1250, 300]),
    brokerOffsets: [4300],
    currentLag: 300,
    timeNow: 600,
    rules: rules(true, true, false, false, false, false),
    status: 'OK',
    window: 'as-is',
  },
  {
    name: '7b REWIND: the same step down, never climbed back',
    commits: five([1000, 2000, 3000, 2000, 2500], [100, 150, 200, 1250, 1300]),
    brokerOffsets: [3800],
    currentLag: 1300,
    timeNow: 600,
    rules: rules(true, true, false, false, true, false),
    status: 'REWIND',
    window: 'as-is',
  },
  {
    name: '8 OK: current lag 0, though stopped by the timestamps',
    commits: five(ascending, [50, 100, 150, 200, 250]),
    brokerOffsets: [5250],
    currentLag: 0,
    timeNow: 1000,
    rules: rules(true, false, true, false, true, false),
    status: 'OK',
    window: 'current-lag-from-readings',
  },
  {
    name: '9 STOP: lag zero at every commit, but new data since (#290)',
    commits: oneASecond,
    brokerOffsets: [792_749_024, 792_749_000, 792_748_800, 792_748_600, 792_748_500],
    currentLag: 931,
    timeNow: 1_512_224_650,
    rules: rules(false, false, true, false, true, false),
    status: 'STOP',
    window: 'as-is',
  },
  {
    name: '10 OK: stopped by the timestamps, but caught up in the recent broker offsets (#303)',
    commits: oneASecond,
    brokerOffsets: [792_748_094, 792_748_093, 792_748_093, 792_748_093],
    currentLag: 1,
    timeNow: 1_512_224_650,
    rules: rules(false, false, true, false, true, true),
    status: 'OK',
    window: 'as-is',
  },
  {
    name: '11 OK: case 0 with commits of unknown lag between',
    commits: [1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000, 5500].map((offset, i) => [
      offset,
      (i + 2) * 50_000,
      i % 2 === 0 ? i * 25 : null,
    ]),
    brokerOffsets: [5700],
    currentLag: 200,
    timeNow: 600,
    rules: rules(false, false, false, false, true, false),
    status: 'OK',
    window: 'rule-stage-only',
  },
];

const commitsOf = (c: Case): BurrowCommit[] =>
  c.commits.map(([offset, at, lag]) => ({ offset, at, lag }));

/**
 * The case as reconcile readings: each commit read when made (Kafka-dated), its log end the
 * offset plus its lag; then one reading a second per broker offset, oldest first, the last
 * commit still in place.
 */
function windowOf(c: Case): OffsetObservation[] {
  const readings: OffsetObservation[] = c.commits.map(([offset, at, lag]) => ({
    observedAt: at,
    committed: offset,
    committedAt: at,
    logStart: 0,
    logEnd: offset + (lag ?? 0),
  }));
  const [lastOffset, lastAt] = c.commits[c.commits.length - 1] ?? [0, 0];
  const ends = [...c.brokerOffsets].reverse();
  if (c.window === 'current-lag-from-readings') ends[ends.length - 1] = lastOffset + c.currentLag;
  ends.forEach((logEnd, i) => {
    readings.push({
      observedAt: lastAt + (i + 1) * 1000,
      committed: lastOffset,
      logStart: 0,
      logEnd,
    });
  });
  return readings;
}

describe("Burrow's evaluator table through Tally's rule stage", () => {
  it.each(CASES)('$name', (c) => {
    const commits = commitsOf(c);
    const now = c.timeNow * 1000;
    const rewound = rewindIndex(commits);
    expect({
      lagAlwaysNotZero: isLagAlwaysNotZero(commits),
      rewind: rewound !== -1,
      stopped: offsetsStopped(commits, now),
      stalled: offsetsStalled(commits),
      lagNotDecreasing: lagNotDecreasing(commits),
      recentLagZero: recentLagZero(commits, c.brokerOffsets),
    }).toEqual(c.rules);
    if (rewound !== -1) {
      expect(rewindRecovered(commits, rewound)).toBe(c.status !== 'REWIND');
    }
    const status = burrowPartitionStatus({
      commits,
      recentLogEnds: c.brokerOffsets,
      currentLag: c.currentLag,
      now,
      allowedLag: 0,
    });
    expect(status).toBe(c.status);
  });
});

describe("Burrow's evaluator table through evaluatePartition (reconcile readings)", () => {
  const fed = CASES.filter((c) => c.window !== 'rule-stage-only');

  it('feeds every case but the one with unknown lags', () => {
    expect(fed.map((c) => c.name.split(' ')[0])).toEqual([
      '0',
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '7b',
      '8',
      '9',
      '10',
    ]);
  });

  it.each(fed)('$name', (c) => {
    const window = windowOf(c);
    if (c.window === 'as-is') {
      // The readings carry the table's current lag as given.
      const newest = window[window.length - 1];
      expect((newest?.logEnd ?? 0) - (newest?.committed ?? 0)).toBe(c.currentLag);
    }
    const e = evaluatePartition(window, c.timeNow * 1000, window.length);
    expect(e).toMatchObject({ status: c.status, currentLag: c.currentLag, complete: 1 });
  });
});
