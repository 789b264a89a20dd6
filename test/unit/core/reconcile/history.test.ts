import { describe, expect, it } from 'vitest';
import { historyEntries } from '../../../../functions/core/reconcile/history.js';
import { stepPartition } from '../../../../functions/core/reconcile/offsets/partition-history.js';
import { createReconciler } from '../../../../functions/core/reconcile/reconciler.js';
import { planRestore } from '../../../../functions/core/reconcile/restore-plan.js';
import { FakeCluster } from '../../../helpers/fake-cluster.js';
import { memoryHistory, memoryMappings, memoryReports } from '../../../helpers/reconcile-stores.js';

const MINUTE = 60_000;
const T0 = Date.parse('2026-01-01T00:00:00Z');
const WINDOW = 10;
const options = {
  windowSize: WINDOW,
  graceMs: 0,
  retentionMs: 14 * 1440 * MINUTE,
  pruneBudget: 200,
};

/** `n` Empty groups on one topic of 10 partitions, each committed 1 behind the log end. */
function clusterOf(n: number) {
  const cluster = new FakeCluster();
  cluster.topics.set(
    't',
    Array.from({ length: 10 }, () => ({ logStart: 0, logEnd: 3 })),
  );
  for (let g = 0; g < n; g++) {
    cluster.groups.set(`g${g}`, {
      state: 'Empty',
      members: [],
      commits: new Map(Array.from({ length: 10 }, (_, p) => [`t#${p}`, 2])),
    });
  }
  return cluster;
}

function setup(cluster: FakeCluster) {
  let now = T0;
  const history = memoryHistory();
  const reports = memoryReports();
  const reconciler = createReconciler(
    { source: cluster.source(() => now), history, mappings: memoryMappings(), reports },
    options,
  );
  return {
    history,
    reports,
    run: (at: number) => {
      now = at;
      return reconciler.run();
    },
  };
}

describe('reconcile writes what changed', () => {
  it('writes one history item per group that moved, none for a group that did not', async () => {
    const N = 50;
    const K = 7;
    const cluster = clusterOf(N);
    const { history, run } = setup(cluster);
    await run(T0);
    expect(history.writes).toBe(N); // cold: one item per group and topic
    expect(history.table.count).toBe(N);

    history.writes = 0;
    const warm = await run(T0 + 15 * MINUTE);
    expect(history.writes).toBe(0);
    expect(warm.groups.every((g) => g.partitions.every((p) => p.status === 'STOP'))).toBe(true);

    // K groups commit further on one partition each: K items written, whatever N is.
    for (let g = 0; g < K; g++) cluster.groups.get(`g${g}`)?.commits.set('t#3', 3);
    history.writes = 0;
    const moved = await run(T0 + 30 * MINUTE);
    expect(history.writes).toBe(K);
    expect(moved.historyConflicts).toBe(0);
    const g0 = moved.groups.find((g) => g.group === 'g0');
    expect(g0?.partitions.find((p) => p.partition === 3)).toMatchObject({
      status: 'OK',
      committed: 3,
    });

    // The log end moving moves every group reading it.
    for (const log of cluster.topics.get('t') ?? []) log.logEnd = 4;
    history.writes = 0;
    await run(T0 + 45 * MINUTE);
    expect(history.writes).toBe(N);
  });

  it('stores a dated report when findings change or half the retention passed, latest every run', async () => {
    const cluster = clusterOf(3);
    const { reports, run } = setup(cluster);
    const dated = async () =>
      (await reports.groupReportsSince('g0', T0)) as Array<{ partitions: { status: string }[] }>;
    await run(T0);
    await run(T0 + 15 * MINUTE); // STOP from here on
    await run(T0 + 30 * MINUTE);
    await run(T0 + 45 * MINUTE);
    expect((await dated()).length).toBe(2); // the first run's findings, then STOP once
    cluster.groups.get('g0')?.commits.set('t#0', 1); // rewound
    await run(T0 + 60 * MINUTE);
    await run(T0 + 75 * MINUTE);
    // The rewind is judged on both runs, with the same findings: stored once.
    const statuses = (await dated()).map((r) => r.partitions[0]?.status);
    expect(statuses).toEqual(['STALL', 'STOP', 'REWIND']);
    const latest = (await reports.latestGroupReport('g0')) as { partitions: { end: object }[] };
    expect(latest.partitions[0]?.end).toMatchObject({ observedAt: T0 + 75 * MINUTE });
    // Half the retention later with nothing changed: stored again, so it stays within reach.
    const before = (await dated()).length;
    await run(T0 + 7 * 1440 * MINUTE);
    expect((await dated()).length).toBe(before + 1);
  });

  it('judges an unchanged window as its last change plus now: a stopped group reads STOP, not OK', async () => {
    const cluster = clusterOf(1);
    const { run } = setup(cluster);
    for (let i = 0; i < 30; i++) await run(T0 + i * 15 * MINUTE);
    const last = await run(T0 + 30 * 15 * MINUTE);
    const p0 = last.groups[0]?.partitions[0];
    expect(p0).toMatchObject({ status: 'STOP', currentLag: 1 });
    // Time lag runs from the first time the stuck state was seen, not from the last write.
    expect(p0?.timeLagSeconds).toBeGreaterThanOrEqual(30 * 15 * 60);
  });

  it('keeps two overlapping runs from interleaving an item: one loses and says so', async () => {
    const cluster = clusterOf(1);
    const history = memoryHistory();
    const make = (at: number) =>
      createReconciler(
        {
          source: cluster.source(() => at),
          history,
          mappings: memoryMappings(),
          reports: memoryReports(),
        },
        options,
      );
    await make(T0).run();
    cluster.groups.get('g0')?.commits.set('t#0', 3);
    const [a, b] = await Promise.all([make(T0 + MINUTE).run(), make(T0 + 2 * MINUTE).run()]);
    expect(a.historyConflicts + b.historyConflicts).toBe(1);
    for (const report of [a, b, await make(T0 + 3 * MINUTE).run()]) {
      const statuses = report.groups[0]?.partitions.map((p) => p.status) ?? [];
      expect(statuses).not.toContain('REWIND');
      expect(statuses).not.toContain('LOST');
    }
  });

  it('holds LOST with its last good offset and real lag for the retention, then retires it', async () => {
    const cluster = clusterOf(1);
    const { history, run } = setup(cluster);
    await run(T0);
    cluster.groups.delete('g0'); // Kafka expired the group's offsets
    const log = cluster.topics.get('t')?.[0];
    const statuses: string[] = [];
    // Far more runs than the window holds, the log growing all along.
    for (let i = 1; i <= 3 * WINDOW; i++) {
      if (log) log.logEnd += 5;
      const report = await run(T0 + i * MINUTE);
      const p0 = report.groups[0]?.partitions[0];
      statuses.push(p0?.status ?? 'gone');
      expect(p0).toMatchObject({ lost: { lastGoodOffset: 2 }, currentLag: (log?.logEnd ?? 0) - 2 });
    }
    expect(new Set(statuses)).toEqual(new Set(['LOST']));
    const plan = planRestore('g0', historyEntries(await history.loadAll()));
    expect(plan.partitions.map((p) => [p.partition, p.target])).toContainEqual([0, 2]);
    // Quiet runs write nothing while it is held.
    history.writes = 0;
    await run(T0 + 40 * MINUTE);
    await run(T0 + 41 * MINUTE);
    expect(history.writes).toBe(0);
    // Past the retention it is let go: a window of "no commit" readings, then retired.
    for (let i = 0; i <= WINDOW; i++) await run(T0 + options.retentionMs + (i + 1) * MINUTE);
    expect(history.table.count).toBe(0);
    history.writes = 0;
    await run(T0 + options.retentionMs + 100 * MINUTE);
    expect(history.writes).toBe(0);
  });

  it('releases LOST when the group commits inside the log again', async () => {
    const cluster = clusterOf(1);
    const { run } = setup(cluster);
    await run(T0);
    const commits = cluster.groups.get('g0')?.commits;
    for (let p = 0; p < 10; p++) commits?.delete(`t#${p}`);
    commits?.set('t#9', 2); // one partition keeps the group readable with the others gone
    for (let i = 1; i <= 2 * WINDOW; i++) await run(T0 + i * MINUTE);
    commits?.set('t#0', 3);
    const report = await run(T0 + 30 * MINUTE);
    const partitions = report.groups[0]?.partitions ?? [];
    expect(partitions.find((p) => p.partition === 0)).toMatchObject({ status: 'OK', committed: 3 });
    expect(partitions.find((p) => p.partition === 1)?.status).toBe('LOST');
  });

  it('reads history stored one item per partition and moves it into items, keeping the window', async () => {
    const cluster = clusterOf(1);
    cluster.groups.get('g0')?.commits.set('t#0', 1); // rewound from 2
    const { history, run } = setup(cluster);
    for (let p = 0; p < 10; p++) {
      history.putLegacy({
        group: 'g0',
        key: `t#${p}`,
        window: [{ observedAt: T0 - MINUTE, committed: 2, logStart: 0, logEnd: 3 }],
        version: 4,
      });
    }
    const report = await run(T0);
    expect(report.groups[0]?.partitions[0]).toMatchObject({
      status: 'REWIND',
      rewind: { from: 2, to: 1 },
    });
    expect(report.groups[0]?.partitions[1]?.status).toBe('STOP');
    // One item now, the ten legacy ones deleted.
    expect([...history.table.all()].map((item) => item.partition)).toEqual(['t#w0']);
  });
});

describe('stepPartition', () => {
  const o = (observedAt: number, committed: number | null, logEnd = 10) => ({
    observedAt,
    committed,
    logStart: 0,
    logEnd,
  });

  it('stores nothing new when nothing moved, and judges the stored changes plus now', () => {
    const stored = { changes: [o(1, 5), o(2, 6)] };
    const step = stepPartition(stored, o(3, 6), false, 10);
    expect(step.changed).toBe(false);
    expect(step.next?.changes).toBe(stored.changes);
    expect(step.window.map((w) => w.observedAt)).toEqual([1, 2, 3]);
  });

  it('stores a move, and an owned partition without a commit without a countdown', () => {
    expect(stepPartition({ changes: [o(1, 5)] }, o(2, 5, 11), false, 10).changed).toBe(true);
    const owned = stepPartition({ changes: [o(1, null)] }, o(2, null), true, 10);
    expect(owned).toMatchObject({ changed: false, next: { changes: [o(1, null)] } });
  });

  it('clears a gone mark when the partition is seen again', () => {
    const step = stepPartition({ changes: [o(1, 5)], goneAt: 2 }, o(3, 5), false, 10);
    expect(step).toMatchObject({ changed: true, next: { changes: [o(1, 5)] } });
    expect(step.next?.goneAt).toBeUndefined();
  });
});
