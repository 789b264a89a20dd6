import { describe, expect, it } from 'vitest';
import type { OutgoingEvent } from '../../functions/core/notify/events.js';
import {
  createGroupNotifier,
  type StoredIncident,
} from '../../functions/core/notify/group-notifier.js';
import {
  MAX_SHARDS,
  SHARD_BUCKETS,
  shardKey,
  shardOf,
  shardRange,
  shardScope,
} from '../../functions/core/reconcile/group-shards.js';
import {
  createReconciler,
  type ReconcileReport,
} from '../../functions/core/reconcile/reconciler.js';
import {
  type FailedChild,
  MAP_OUTPUT_BUDGET,
  mergeShardSummaries,
  type ShardSummary,
  shardBudget,
  shardSummary,
} from '../../functions/core/reconcile/shard-summary.js';
import {
  type ReconcileSummary,
  summarizeReconcile,
} from '../../functions/core/reconcile/summary.js';
import { murmur2 } from '../../functions/core/shared/murmur2.js';
import { loadNotifyConfig } from '../../functions/platform/notify-config.js';
import { payloadBytes, STATE_PAYLOAD_LIMIT } from '../../infra/local/payload-limits.js';
import { FakeCluster } from '../helpers/fake-cluster.js';
import {
  type MemoryTable,
  memoryHistory,
  memoryMappings,
  memoryReports,
} from '../helpers/reconcile-stores.js';

// The reconcile fan-out's core: which shard owns a group, runs scoped to one shard, and the merge
// of their summaries, over in-memory stores at a size the local broker could not hold (2,000
// groups, ~20,000 partitions): N scoped runs write what one run writes, and their merged summary
// is the one run's summary; every payload between states stays under Step Functions' 256 KiB.

const MINUTE = 60_000;
const T0 = Date.parse('2026-12-01T06:00:00Z');
const TABLE = 'tally-reconcile-reports';
const options = { windowSize: 5, graceMs: 0, retentionMs: 14 * 1440 * MINUTE, pruneBudget: 200 };

describe('shardOf', () => {
  it("is a range of Kafka's murmur2 of the group id: the same shard in every run and process", () => {
    const encoder = new TextEncoder();
    for (const id of ['orders-billing', 'tally-downstream-example', 'g', 'ü-group', '']) {
      const hash = murmur2(encoder.encode(id)) & 0x7fffffff;
      for (const shards of [1, 4, 8, 64]) {
        expect(shardOf(id, shards)).toBe(Math.floor((hash * shards) / 2 ** 31));
      }
    }
    // Pinned: a change of hash would move every group between runs of one deployment.
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((i) => shardOf(`group-${i}`, 8))).toEqual([
      4, 4, 5, 4, 2, 1, 3, 7,
    ]);
    expect(shardOf('orders-billing', 8)).toBe(3);
  });

  it("names, for any shard count, exactly the index keys of the shard's groups", () => {
    for (const shards of [1, 3, 7, 8, 13, 64]) {
      for (let shard = 0; shard < shards; shard++) {
        const { buckets } = shardRange(shard, shards);
        // A shard of N spans at most ceil(64 / N) + 1 buckets of the byShard index.
        expect(buckets.length).toBeLessThanOrEqual(Math.ceil(SHARD_BUCKETS / shards) + 1);
        for (let i = 0; i < 500; i++) {
          const id = `group-${shards}-${i}`;
          const { bucket, hash } = shardKey(id);
          const named = buckets.some((b) => b.bucket === bucket && hash >= b.from && hash <= b.to);
          expect(named).toBe(shardOf(id, shards) === shard);
        }
      }
    }
  });

  it('spreads 10,000 group ids as a uniform hash would (every shard within 4 σ of the mean)', () => {
    for (const shards of [4, 8, 16, MAX_SHARDS]) {
      const counts = new Array<number>(shards).fill(0);
      for (let i = 0; i < 10_000; i++) {
        const s = shardOf(`consumer-${i % 7 === 0 ? 'billing' : 'orders'}-${i}`, shards);
        expect(s).toBeGreaterThanOrEqual(0);
        expect(s).toBeLessThan(shards);
        counts[s] = (counts[s] ?? 0) + 1;
      }
      const mean = 10_000 / shards;
      const sigma = Math.sqrt(mean * (1 - 1 / shards));
      for (const n of counts)
        expect(Math.abs(n - mean), `${shards} shards`).toBeLessThan(4 * sigma);
    }
  });

  it('scopes a shard: every group is owned by exactly one shard, within the prefix', () => {
    const scopes = [0, 1, 2, 3].map((s) => shardScope(s, 4, 'team-a.'));
    for (let i = 0; i < 500; i++) {
      expect(scopes.filter((s) => s.owns(`team-a.g${i}`))).toHaveLength(1);
      expect(scopes.filter((s) => s.owns(`team-b.g${i}`))).toHaveLength(0);
    }
  });
});

/** Groups each consuming a topic of 10 partitions; every 7th has an offset past its log (ERR). */
function bigCluster(groups = 2000) {
  const cluster = new FakeCluster();
  for (let g = 0; g < groups; g++) {
    const topic = `orders-${g}`;
    cluster.topics.set(
      topic,
      Array.from({ length: 10 }, () => ({ logStart: 0, logEnd: 1000 })),
    );
    const commits = new Map<string, number>();
    const live = g % 5 === 0;
    // Caught up (OK) when consumed or every third; else behind and not moving (STALL: ERR).
    const at = live || g % 3 === 0 ? 1000 : 900;
    for (let p = 0; p < 10; p++) commits.set(`${topic}#${p}`, g % 7 === 0 && p === 0 ? 1500 : at);
    cluster.groups.set(`group-${String(g).padStart(5, '0')}`, {
      state: live ? 'Stable' : 'Empty',
      members: live
        ? [
            {
              memberId: `m-${g}`,
              clientId: `client-${g}`,
              clientHost: '/10.0.0.1',
              assignment: { [topic]: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] },
            },
          ]
        : [],
      commits,
    });
  }
  return cluster;
}

function stores() {
  const history = memoryHistory();
  const mappings = memoryMappings();
  const reports = memoryReports();
  return { history, mappings, reports };
}

/** What two runs' summaries share: not when they ran, nor how many admin calls they split into. */
function comparable(summary: ReconcileSummary) {
  const { runAt: _r, adminCalls: _a, reports: _p, ...rest } = summary;
  const {
    shards: _s,
    children: _c,
    ...same
  } = rest as typeof rest & {
    shards?: unknown;
    children?: unknown;
  };
  return same;
}

const keysOf = (table: MemoryTable) =>
  [...table.all()].map((item) =>
    JSON.stringify([item.group ?? item.pk, item.partition ?? item.sk]),
  );

describe('reconcile fan-out over 2,000 groups and 20,000 partitions', () => {
  it('N scoped runs write what one run writes; their merged summary is its summary; payloads stay < 256 KiB', async () => {
    const cluster = bigCluster();
    const one = stores();
    const report = await createReconciler(
      { source: cluster.source(() => T0), ...one },
      options,
    ).run();
    const sequential = summarizeReconcile(report, TABLE);
    expect(sequential.groups).toBe(2000);
    expect(sequential.partitions).toBe(20_000);
    expect(sequential.statuses).toEqual({ OK: 799, WARN: 0, ERR: 1201 });
    expect(sequential.anomalies).toEqual({ OUT_OF_RANGE: 286, STALL: 10_518 });
    expect(sequential.problemsNotShown).toBe(1201 - 50);

    const shards = 8;
    const fan = stores();
    const reconciler = createReconciler({ source: cluster.source(() => T0), ...fan }, options);
    const outputs = await Promise.all(
      Array.from({ length: shards }, async (_, shard) => {
        const part = await reconciler.run(shardScope(shard, shards));
        const summary = shardSummary(summarizeReconcile(part, TABLE), shard, shardBudget(shards));
        // Each child's result, as the Map hands it on: JSON.
        expect(payloadBytes(summary)).toBeLessThanOrEqual(shardBudget(shards));
        return JSON.parse(JSON.stringify(summary)) as ShardSummary;
      }),
    );
    expect(outputs.map((o) => o.groups).reduce((a, b) => a + b)).toBe(2000);
    expect(Math.min(...outputs.map((o) => o.groups))).toBeGreaterThan(2000 / shards / 1.3);
    // The Map's output and the merge's input and output, under the state limit.
    expect(payloadBytes(outputs)).toBeLessThan(STATE_PAYLOAD_LIMIT);
    const merged = mergeShardSummaries(outputs, TABLE);
    expect(payloadBytes(merged)).toBeLessThan(STATE_PAYLOAD_LIMIT);
    expect(merged.children).toEqual({ planned: shards, failed: 0 });
    expect(comparable(merged)).toEqual(comparable(sequential));

    // The same items, each written once (version 1), as the one run wrote.
    expect(keysOf(fan.history.table).sort()).toEqual(keysOf(one.history.table).sort());
    expect([...fan.history.table.all()].every((item) => item.version === 1)).toBe(true);
    expect(keysOf(fan.mappings.table).sort()).toEqual(keysOf(one.mappings.table).sort());
    expect(fan.mappings.table.count).toBe(400 * 11);
    expect(keysOf(fan.reports.table).sort()).toEqual(keysOf(one.reports.table).sort());
  });

  it('at 64 shards and long group ids the children trim their problem lists to fit; the merge shows only what is certainly in order', async () => {
    const cluster = new FakeCluster();
    cluster.topics.set('t', [{ logStart: 0, logEnd: 10 }]);
    for (let g = 0; g < 3000; g++) {
      cluster.groups.set(`${'a-very-long-consumer-group-name-'.repeat(6)}${g}`, {
        state: 'Empty',
        members: [],
        commits: new Map([['t#0', 50]]), // past the log end: ERR
      });
    }
    const fan = stores();
    const reconciler = createReconciler({ source: cluster.source(() => T0), ...fan }, options);
    const shards = MAX_SHARDS;
    const outputs: ShardSummary[] = [];
    for (let shard = 0; shard < shards; shard++) {
      const part = await reconciler.run(shardScope(shard, shards));
      outputs.push(shardSummary(summarizeReconcile(part, TABLE), shard, shardBudget(shards)));
    }
    expect(outputs.some((o) => o.problemsTrimmed > 0)).toBe(true);
    expect(payloadBytes(outputs)).toBeLessThanOrEqual(MAP_OUTPUT_BUDGET);
    const merged = mergeShardSummaries(outputs, TABLE);
    expect(merged.statuses.ERR).toBe(3000);
    expect(merged.problems.length + merged.problemsNotShown).toBe(3000);
    // A prefix of what one run would rank first.
    const all = outputs.flatMap((o) => o.problems).map((p) => p.group);
    const ranked = [...cluster.groups.keys()].sort((a, b) => a.localeCompare(b));
    expect(merged.problems.map((p) => p.group)).toEqual(ranked.slice(0, merged.problems.length));
    expect(merged.problems.every((p) => all.includes(p.group))).toBe(true);
  });
});

describe('a scoped run leaves other shards alone', () => {
  it("does not mark, sweep or remove other shards' history, mappings or reports", async () => {
    const cluster = bigCluster(200);
    const fan = stores();
    const reconciler = createReconciler({ source: cluster.source(() => now), ...fan }, options);
    let now = T0;
    await reconciler.run();
    const others = (table: MemoryTable) =>
      [...table.all()]
        .filter((item) => {
          const group = String(item.group ?? item.pk ?? '').replace(/^group#/, '');
          return group.startsWith('group-') && shardOf(group, 4) !== 0;
        })
        .map((item) => JSON.stringify(item))
        .sort();
    const before = {
      history: others(fan.history.table),
      mappings: others(fan.mappings.table),
      reports: others(fan.reports.table),
    };
    expect(before.history.length).toBeGreaterThan(100);
    // Long after the grace period and the retention, shard 0 alone runs: a run that saw only
    // these groups as the whole cluster would mark the others' partitions gone and delete them.
    now = T0 + 30 * 1440 * MINUTE;
    for (let i = 0; i < 3; i++) {
      now += 16 * 1440 * MINUTE;
      await reconciler.run(shardScope(0, 4));
    }
    expect({
      history: others(fan.history.table),
      mappings: others(fan.mappings.table),
      reports: others(fan.reports.table),
    }).toEqual(before);
  });

  it("notifies for its groups and leaves other shards' open incidents open", async () => {
    const { rules } = loadNotifyConfig({}); // Burrow's defaults: WARN, closes sent
    const items = new Map<string, StoredIncident>();
    const sent: OutgoingEvent[] = [];
    const notifier = createGroupNotifier(
      {
        incidents: {
          load: async () => new Map(items),
          save: async (group, incident, version) => {
            if ((items.get(group)?.version ?? 0) !== version) return false;
            items.set(group, { incident, version: version + 1 });
            return true;
          },
          remove: async (group) => items.delete(group),
        },
        sink: {
          send: async (events) => {
            sent.push(...events);
            return events.map(() => true);
          },
        },
        newId: () => `id-${sent.length}`,
      },
      rules,
    );
    const cluster = bigCluster(40);
    const reconciler = createReconciler({ source: cluster.source(() => T0), ...stores() }, options);
    const errs = (report: ReconcileReport) =>
      report.groups.filter((g) => g.status === 'ERR').map((g) => g.group);
    // Each shard's run opens incidents for its ERR groups.
    const opened: string[] = [];
    for (let shard = 0; shard < 2; shard++) {
      const scope = shardScope(shard, 2);
      const report = await reconciler.run(scope);
      opened.push(...errs(report));
      await notifier.notify(report, 'c', scope);
    }
    expect(opened.length).toBeGreaterThan(2);
    expect([...items.keys()].sort()).toEqual(opened.sort());
    // Shard 0 runs again, complete: shard 1's incidents are not "forgotten groups" to close.
    const scope0 = shardScope(0, 2);
    const again = await reconciler.run(scope0);
    sent.length = 0;
    await notifier.notify(again, 'c', scope0);
    expect([...items.keys()].sort()).toEqual(opened.sort());
    expect(sent).toEqual([]);
    // Unscoped, the same report would close them: what the scope protects.
    await notifier.notify(again, 'c');
    const shard1 = opened.filter((g) => shardOf(g, 2) === 1);
    expect(shard1.length).toBeGreaterThan(0);
    for (const group of shard1) expect(items.has(group)).toBe(false);
  });
});

describe('mergeShardSummaries', () => {
  const summary = (shard: number, groups: string[]): ShardSummary => ({
    ...summarizeReconcile(
      {
        runAt: new Date(T0 + shard * 1000).toISOString(),
        complete: true,
        unreadable: [],
        adminCalls: 3,
        groups: groups.map((group) => ({
          group,
          state: 'Empty',
          status: 'ERR',
          complete: 1,
          partitionCount: 1,
          maxLag: 0,
          totalLag: 0,
          maxTimeLagSeconds: 0,
          anomalies: { LOST: 1 },
          partitions: [],
        })),
        mappings: { written: 1, changed: 0, removed: 0, keptNewer: 0, details: [] },
        historyConflicts: 0,
      },
      TABLE,
    ),
    shard,
    problemsTrimmed: 0,
  });

  it('names a failed child, is incomplete, and dates itself by the earliest shard', () => {
    const failed: FailedChild = { Error: 'DependencyUnavailableError', Cause: 'Kafka down' };
    const merged = mergeShardSummaries([summary(0, ['a']), failed, summary(2, ['b'])], TABLE);
    expect(merged).toMatchObject({
      complete: false,
      groups: 2,
      runAt: new Date(T0).toISOString(),
      adminCalls: 6,
      mappings: { written: 2, changed: 0, removed: 0, keptNewer: 0 },
      unreadable: {
        count: 1,
        first: ['shard 1: child failed (DependencyUnavailableError: Kafka down)'],
      },
      children: { planned: 3, failed: 1 },
    });
    expect(merged.shards.map((s) => s.runAt)).toEqual([
      new Date(T0).toISOString(),
      null,
      new Date(T0 + 2000).toISOString(),
    ]);
    expect(merged.problems.map((p) => p.group)).toEqual(['a', 'b']);
  });

  it("stops the problem list where a trimmed shard's unknown problems could rank", () => {
    const a = summary(0, ['a1', 'a2', 'a3', 'a4']);
    const b = summary(1, ['b1', 'b2']);
    // Shard 0 kept two of its four.
    const trimmed: ShardSummary = {
      ...a,
      problems: a.problems.slice(0, 2),
      problemsNotShown: 2,
      problemsTrimmed: 2,
    };
    const merged = mergeShardSummaries([trimmed, b], TABLE);
    // a3 (not shown) ranks before b1 and b2: the list stops after a2.
    expect(merged.problems.map((p) => p.group)).toEqual(['a1', 'a2']);
    expect(merged.problemsNotShown).toBe(4);
  });
});
