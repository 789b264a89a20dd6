import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { createMappingStore } from '../../functions/adapters/dynamodb/mapping-store.js';
import { createOffsetHistory } from '../../functions/adapters/dynamodb/offset-history.js';
import { createPlanStore } from '../../functions/adapters/dynamodb/plan-store.js';
import { createReportStore } from '../../functions/adapters/dynamodb/report-store.js';
import { createRestoreRecords } from '../../functions/adapters/dynamodb/restore-records.js';
import { createReconciler } from '../../functions/core/reconcile/reconciler.js';
import { FakeCluster } from '../helpers/fake-cluster.js';
import { localTablesForFile } from '../helpers/local-tables.js';

// Reconcile's pruning through the real DynamoDB adapters on the local DynamoDB API (which, like
// DynamoDB's TTL on a bad day, never expires anything): runs on an injected clock delete what
// is past the retention themselves.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const START = Date.parse('2026-03-01T00:00:00Z');

describe('reconcile retention on DynamoDB', () => {
  const { documents, table } = localTablesForFile('retention');
  const scan = async (id: string) =>
    (await documents.send(new ScanCommand({ TableName: table(id), ConsistentRead: true }))).Items ??
    [];

  it('deletes dated reports past the retention, and the reports and history of a gone group', async () => {
    let now = START;
    const cluster = new FakeCluster();
    cluster.topics.set('orders', [{ logStart: 0, logEnd: 100 }]);
    const consuming = (offset: number) => ({
      state: 'Stable',
      members: [
        { memberId: 'm1', clientId: 'c1', clientHost: '/10.0.0.1', assignment: { orders: [0] } },
      ],
      commits: new Map([['orders#0', offset]]),
    });
    cluster.groups.set('live', consuming(90));
    cluster.groups.set('gone', {
      state: 'Empty',
      members: [],
      commits: new Map([['orders#0', 50]]),
    });
    const reports = createReportStore(documents, table('ReconcileReportsTable'));
    const reconciler = createReconciler(
      {
        source: cluster.source(() => now),
        history: createOffsetHistory(documents, table('OffsetHistoryTable')),
        mappings: createMappingStore(documents, table('MappingsTable')),
        reports,
      },
      { windowSize: 3, graceMs: 0, retentionMs: 14 * DAY, pruneBudget: 100 },
    );

    // Twice a day for 38 days; `gone` stops being a group on day 2 (Kafka expired its offsets).
    // Its offsets are LOST, held (issue 14) and reported until the hold is let go R (14 days)
    // later; the group is then forgotten between R and 1.5 R after that last report: by day 37.
    // `live` is OK throughout: its dated report is stored on day 0 and then every half retention.
    let prunedReports = 0;
    for (let run = 0; run < 76; run++) {
      now = START + run * 12 * HOUR;
      if (run === 4) cluster.groups.delete('gone');
      cluster.topics.set('orders', [{ logStart: 0, logEnd: 100 + run }]);
      cluster.groups.set('live', consuming(100 + run)); // caught up
      const report = await reconciler.run();
      expect(report.complete).toBe(true);
      prunedReports += report.pruned?.reports ?? 0;
      if (run === 40) {
        // Day 20: nothing dated before day 6 is left of `live`, and `gone` still has its
        // latest report (it is forgotten 1.5 × the retention after it was last marked).
        expect(prunedReports).toBeGreaterThan(0);
        const liveDated = (await scan('ReconcileReportsTable'))
          .filter((item) => item.group === 'live' && String(item.sk).startsWith('report#'))
          .map((item) => String(item.sk).slice('report#'.length));
        expect(liveDated.length).toBeGreaterThan(0);
        const day6 = new Date(START + 6 * DAY).toISOString();
        expect(liveDated.every((at) => at >= day6)).toBe(true);
        expect(await reports.latestGroupReport('gone')).toBeDefined();
      }
    }
    const dated = (await scan('ReconcileReportsTable'))
      .filter((item) => item.group === 'live' && String(item.sk).startsWith('report#'))
      .map((item) => String(item.sk).slice('report#'.length));
    const horizon = new Date(now - 14 * DAY).toISOString();
    expect(dated.length).toBeGreaterThan(0);
    expect(dated.every((at) => at >= horizon)).toBe(true);
    expect(dated.length).toBeLessThanOrEqual(14 * 2 + 1);

    // `gone`: no report, dated report, index entry or history item is left.
    const left = (await scan('ReconcileReportsTable')).filter(
      (item) => item.group === 'gone' || item.sk === 'group#gone',
    );
    expect(left).toEqual([]);
    expect(await reports.latestGroupReport('gone')).toBeUndefined();
    const history = await scan('OffsetHistoryTable');
    expect(history.map((item) => item.group)).toEqual(['live']);
    expect(await reports.latestGroupReport('live')).toMatchObject({ group: 'live', status: 'OK' });
  });

  it('keeps the newest restores of a group up to the configured count, chunks included', async () => {
    const restores = createRestoreRecords(documents, table('ReconcileReportsTable'), { kept: 3 });
    for (let i = 0; i < 5; i++) {
      await restores.save({
        group: 'restored',
        executedAt: new Date(START + i * HOUR).toISOString(),
        // Two chunks each: a record of 1,500 partitions is more than one chunk holds.
        partitions: Array.from({ length: 1500 }, (_, partition) => ({ partition, run: i })),
      });
    }
    const items = (await scan('ReconcileReportsTable')).filter((item) => item.group === 'restored');
    const heads = items.filter((item) => String(item.sk).split('#').length === 2);
    expect(heads.map((item) => item.sk)).toEqual(
      [2, 3, 4].map((i) => `restore#${new Date(START + i * HOUR).toISOString()}`),
    );
    // Every kept restore has its two chunks; the removed ones left none behind.
    expect(items).toHaveLength(3 * 3);
    const oldest = await restores.load('restored', new Date(START + 2 * HOUR).toISOString());
    expect(oldest?.partitions).toHaveLength(1500);
  });

  it("keeps a group's restore plans at most 30 days and at most 50", async () => {
    const plans = createPlanStore(documents, table('ReconcileReportsTable'));
    const plan = (n: number) => ({
      group: 'planned',
      partitions: [
        {
          topic: 'orders',
          partition: n,
          current: 5,
          target: 1,
          goodAt: '2026-03-01T00:00:00.000Z',
        },
      ],
      csv: '',
    });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(START);
      await plans.save('old-plan', plan(0), 'digest-old');
      for (let n = 1; n <= 55; n++) {
        vi.setSystemTime(START + 31 * DAY + n * HOUR);
        await plans.save(`plan-${n}`, plan(n), `digest-${n}`);
      }
    } finally {
      vi.useRealTimers();
    }
    expect(await plans.load('planned', 'old-plan')).toBeUndefined();
    expect(await plans.load('planned', 'plan-55')).toMatchObject({ group: 'planned' });
    const heads = (await scan('ReconcileReportsTable')).filter(
      (item) => item.group === 'planned' && String(item.sk).split('#').length === 2,
    );
    expect(heads).toHaveLength(50);
    expect(await plans.load('planned', 'plan-5')).toBeUndefined();
    expect(await plans.load('planned', 'plan-6')).toMatchObject({ group: 'planned' });
  });

  it('stores a report of thousands of partitions, over the 400 KB item limit as JSON', async () => {
    const reports = createReportStore(documents, table('ReconcileReportsTable'));
    const partitions = Array.from({ length: 5000 }, (_, partition) => ({
      topic: 'orders-events-v2',
      partition,
      status: 'OK',
      owner: `consumer-1-abcdef01-2345-6789-abcd-ef0123456789-${partition % 40}`,
      committed: 123_456_789 + partition * 17,
      end: { observedAt: START, committed: 123_456_789, logStart: 0, logEnd: 123_456_792 },
    }));
    const report = { group: 'wide', status: 'OK', partitions };
    expect(JSON.stringify(report).length).toBeGreaterThan(400 * 1024);
    await reports.saveGroupReport('wide', START, report, { ...report, partitions: [] });
    expect(await reports.latestGroupReport('wide')).toEqual(report);
    expect(await reports.groupReportsSince('wide', START)).toEqual([{ ...report, partitions: [] }]);
  });

  it('does not forget a group that came back after the decision was read', async () => {
    const reports = createReportStore(documents, table('ReconcileReportsTable'));
    await reports.markReported('back', START);
    // The group is reported again (a newer latest and mark) before the forgetting run deletes.
    await reports.saveGroupReport('back', START + 30 * DAY, { group: 'back' }, { group: 'back' });
    await reports.markReported('back', START + 30 * DAY);
    await reports.forgetGroup('back', START, START + 16 * DAY);
    expect(await reports.latestGroupReport('back')).toEqual({ group: 'back' });
    expect((await reports.reportedGroups()).get('back')?.markedAt).toBe(START + 30 * DAY);
    const { Item } = await documents.send(
      new GetCommand({
        TableName: table('ReconcileReportsTable'),
        Key: { group: 'back', sk: 'latest' },
      }),
    );
    expect(Item?.at).toBe(START + 30 * DAY);
  });
});
