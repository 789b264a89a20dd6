import { describe, expect, it } from 'vitest';
import type { GroupReport, ReportStore } from '../../functions/core/reconcile/ports.js';
import type { ReconcileReport } from '../../functions/core/reconcile/reconciler.js';
import { FakeCluster } from '../helpers/fake-cluster.js';
import { memoryReconciler } from '../helpers/reconcile-stores.js';

// 180 days of scheduled reconcile runs on an injected clock, over groups that come and go, with
// stores that measure what they hold: what reconcile keeps must be bounded by its configuration
// (retention, window), never by the number of runs, and findings must still come out right.

const MINUTE = 60_000;
const DAY = 1440 * MINUTE;
const CADENCE = 15 * MINUTE; // 96 runs a day, 17,280 in 180 days
const RETENTION = 14 * DAY;
const WINDOW = 10;
const RUNS_PER_DAY = DAY / CADENCE;
const START = Date.parse('2026-01-01T00:00:00Z');
/** A new batch job group every JOB_EVERY days: consumes 3 days, then Empty 7, then gone. */
const JOB_EVERY = 6;
const PLANT_DAY = 100;

// Bounds, derived from the scenario and the configuration, never from the number of runs.
// Groups reported within 2 R at any time: orders, payments, and the jobs that started within
// 2 R + 10 days (a job is reported while live, 10 days, and a window's length after).
const GROUPS_WITHIN = 2 + Math.ceil((2 * RETENTION + 10 * DAY) / (JOB_EVERY * DAY));
/** Per group: one dated report per run within R, plus one written before pruning, latest, index. */
const REPORT_ITEMS = GROUPS_WITHIN * (RETENTION / CADENCE + 3);
/** Each dated report ≤ 2 KB here (summary and its findings), each latest ≤ 8 KB. */
const REPORT_BYTES = REPORT_ITEMS * 2048 + GROUPS_WITHIN * 8192;
/** orders 8, payments 2, jobs with commits (10 days: 2 jobs × 2), unobserved < R (3 × 2). */
const HISTORY_ITEMS = 8 + 2 + 2 * 2 + Math.ceil(RETENTION / (JOB_EVERY * DAY)) * 2;
/** Client and partition mappings of live members, twice over (gone members within grace). */
const MAPPING_ITEMS = 2 * (2 + 8 + 1 + 2 + 2 * (1 + 2));
/** A window of 10 observations is ~1.2 KB of JSON; a mapping ~0.2 KB. */
const HISTORY_BYTES = HISTORY_ITEMS * 2048;
const MAPPING_BYTES = MAPPING_ITEMS * 512;
const ITEM_LIMIT = 400 * 1024;
const BOUNDS = {
  reports: { items: REPORT_ITEMS, bytes: REPORT_BYTES },
  history: { items: HISTORY_ITEMS, bytes: HISTORY_BYTES },
  mappings: { items: MAPPING_ITEMS, bytes: MAPPING_BYTES },
};

function member(group: string, i: number, day: number, assignment: Record<string, number[]>) {
  // Members and hosts change daily: containers come and go, so client mappings churn.
  return {
    memberId: `${group}-m${i}-d${day}`,
    clientId: `${group}-client-${i}`,
    clientHost: `/10.0.${day % 250}.${i}`,
    assignment,
  };
}

/** The cluster at run `run`: production, consumption, groups appearing, stopping, vanishing. */
function advance(cluster: FakeCluster, run: number) {
  const day = Math.floor(run / RUNS_PER_DAY);
  const orders = cluster.topics.get('orders') ?? [];
  while (orders.length < (day >= 50 ? 8 : 4)) orders.push({ logStart: 0, logEnd: 0 });
  cluster.topics.set('orders', orders);
  const payments = cluster.topics.get('payments') ?? [
    { logStart: 0, logEnd: 0 },
    { logStart: 0, logEnd: 0 },
  ];
  cluster.topics.set('payments', payments);
  for (const log of [...orders, ...payments]) log.logEnd += 10;

  const ordersSvc = {
    state: 'Stable',
    members: [0, 1].map((i) =>
      member('orders-svc', i, day, { orders: orders.map((_, p) => p).filter((p) => p % 2 === i) }),
    ),
    // Lag wanders between 0 and 4, as a healthy consumer's does (a constant lag reads WARN).
    commits: new Map(orders.map((log, p) => [`orders#${p}`, log.logEnd - ((run + p) % 5)])),
  };
  const paymentsSvc = {
    state: 'Stable',
    members: [member('payments-svc', 0, day, { payments: [0, 1] })],
    commits: new Map(payments.map((log, p) => [`payments#${p}`, log.logEnd - ((run + p) % 3)])),
  };
  const plantRun = PLANT_DAY * RUNS_PER_DAY;
  // Day 100: orders-svc's commit of partition 1 is deleted for two runs (LOST), and
  // payments-svc is rewound by 500 on partition 0 (REWIND), then both carry on.
  if (run === plantRun || run === plantRun + 1) ordersSvc.commits.delete('orders#1');
  if (run === plantRun)
    paymentsSvc.commits.set('payments#0', (payments[0]?.logEnd ?? 0) - 10 - ((run - 1) % 3) - 500);
  cluster.groups.set('orders-svc', ordersSvc);
  cluster.groups.set('payments-svc', paymentsSvc);
  // A describe failure now and then: that run is partial, and must not prune what it misread.
  cluster.describeFails.clear();
  if (run % 97 === 50) cluster.describeFails.add('payments-svc');

  for (let k = 0; k * JOB_EVERY + 1 <= day; k++) {
    const start = (k * JOB_EVERY + 1) * RUNS_PER_DAY;
    const age = run - start;
    const topic = `jobs-${k}`;
    const group = `job-${k}`;
    if (age < 0) continue;
    // Even jobs' topics are deleted 15 days in; odd ones stay (nothing reads them any more).
    if (k % 2 === 0 && age >= 15 * RUNS_PER_DAY) {
      cluster.topics.delete(topic);
      continue;
    }
    const logs = cluster.topics.get(topic) ?? [
      { logStart: 0, logEnd: 0 },
      { logStart: 0, logEnd: 0 },
    ];
    cluster.topics.set(topic, logs);
    if (age < 3 * RUNS_PER_DAY) {
      for (const log of logs) log.logEnd += 5;
      cluster.groups.set(group, {
        state: 'Stable',
        members: [member(group, 0, day, { [topic]: [0, 1] })],
        commits: new Map(logs.map((log, p) => [`${topic}#${p}`, log.logEnd - 2])),
      });
    } else if (age < 10 * RUNS_PER_DAY) {
      const stopped = cluster.groups.get(group);
      if (stopped) cluster.groups.set(group, { ...stopped, state: 'Empty', members: [] });
    } else {
      cluster.groups.delete(group); // Kafka expired the empty group's offsets
    }
  }
}

/** Dated REWIND findings of payments-svc's partition 0, as the audit would find them. */
async function rewindsSince(reports: ReportStore, since: number) {
  const dated = (await reports.groupReportsSince('payments-svc', since)) as GroupReport[];
  return dated.flatMap((r) =>
    r.partitions.filter((p) => p.partition === 0 && p.status === 'REWIND'),
  );
}

describe('reconcile over 180 days of schedules', () => {
  it('keeps stored items and bytes within stated bounds, and still reports what happened', async () => {
    let now = START;
    const cluster = new FakeCluster();
    const { reconciler, history, mappings, reports } = memoryReconciler(cluster, () => now, {
      windowSize: WINDOW,
      graceMs: 5 * MINUTE,
      retentionMs: RETENTION,
      pruneBudget: 200,
    });
    const figures: Record<string, object> = {};
    let planted: ReconcileReport | undefined;
    for (let run = 0; run < 180 * RUNS_PER_DAY; run++) {
      now = START + run * CADENCE;
      advance(cluster, run);
      const report = await reconciler.run();
      expect(report.complete).toBe(cluster.describeFails.size === 0);
      expect(report.historyConflicts).toBe(0);
      if (run === PLANT_DAY * RUNS_PER_DAY) planted = report;
      if (run === (PLANT_DAY + 1) * RUNS_PER_DAY) {
        // What the audit reads (14 days of dated reports) still holds the rewind a day later.
        expect(await rewindsSince(reports, START)).toHaveLength(1);
      }
      const stored = {
        reports: { items: reports.table.count, bytes: reports.table.bytes },
        history: { items: history.table.count, bytes: history.table.bytes },
        mappings: { items: mappings.table.count, bytes: mappings.table.bytes },
      };
      for (const [store, bound] of Object.entries(BOUNDS)) {
        const held = stored[store as keyof typeof stored];
        if (held.items > bound.items || held.bytes > bound.bytes) {
          const day = (run / RUNS_PER_DAY).toFixed(2);
          expect.fail(
            `${store} over ${JSON.stringify(bound)} at run ${run} (day ${day}): ${JSON.stringify(stored)}`,
          );
        }
      }
      if ([30, 90, 180].includes((run + 1) / RUNS_PER_DAY))
        figures[`day ${(run + 1) / RUNS_PER_DAY}`] = stored;
    }
    // Gone jobs were forgotten: the index holds only groups reported within 1.5 R (+ R / 2).
    expect((await reports.reportedGroups()).size).toBeLessThanOrEqual(GROUPS_WITHIN);
    for (const table of [reports.table, history.table, mappings.table]) {
      expect(table.maxItemBytes).toBeLessThan(ITEM_LIMIT);
    }
    console.log(
      JSON.stringify({
        bounds: BOUNDS,
        figures,
      }),
    );

    // The findings planted on day 100 were reported by that day's run.
    const partition = (group: string, p: number) =>
      planted?.groups.find((g) => g.group === group)?.partitions.find((x) => x.partition === p);
    expect(partition('orders-svc', 1)).toMatchObject({ status: 'LOST', committed: null });
    expect(partition('payments-svc', 0)).toMatchObject({
      status: 'REWIND',
      rewind: { recordsToReconsume: 500 },
    });
    // Day 180: the dated reports of day 100 are past the retention, and gone.
    expect(await rewindsSince(reports, START)).toHaveLength(0);
    const kept = await reports.groupReportsSince('orders-svc', START);
    expect(kept.length).toBeLessThanOrEqual(RETENTION / CADENCE + 1);
  });
});

describe("reconcile at a large group's size", () => {
  it('keeps every history item of a group of 5,000 partitions under 100 KB', async () => {
    const topic = 'wide-topic-with-a-long-name-of-sixty-characters-or-so-0000000';
    const partitions = 5000;
    const cluster = new FakeCluster();
    cluster.topics.set(
      topic,
      Array.from({ length: partitions }, () => ({ logStart: 1e15, logEnd: 2e15 })),
    );
    // Every partition moves every run: each run rewrites every item.
    const commitsAt = (i: number) =>
      new Map(Array.from({ length: partitions }, (_, p) => [`${topic}#${p}`, 1e15 + i] as const));
    let now = START;
    const { reconciler, history } = memoryReconciler(cluster, () => now, {
      windowSize: WINDOW,
      graceMs: 0,
      retentionMs: RETENTION,
      pruneBudget: 200,
    });
    for (let i = 0; i < WINDOW + 2; i++) {
      cluster.groups.set('wide', { state: 'Empty', members: [], commits: commitsAt(i) });
      now = START + i * MINUTE;
      await reconciler.run();
    }
    // 50 partitions an item, each item far under DynamoDB's 400 KB.
    expect(history.table.count).toBe(Math.ceil(partitions / 50));
    expect(history.table.maxItemBytes).toBeLessThan(100 * 1024);
  });
});
