import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { batchPut } from '../../functions/adapters/dynamodb/batch-put.js';
import { createMappingStore } from '../../functions/adapters/dynamodb/mapping-store.js';
import { createOffsetHistory } from '../../functions/adapters/dynamodb/offset-history.js';
import { createReportStore } from '../../functions/adapters/dynamodb/report-store.js';
import { shardAttributes } from '../../functions/adapters/dynamodb/shard-index.js';
import { historyEntries } from '../../functions/core/reconcile/history.js';
import { createReconciler } from '../../functions/core/reconcile/reconciler.js';
import { planRestore } from '../../functions/core/reconcile/restore-plan.js';
import { NotFoundError } from '../../functions/core/shared/errors.js';
import {
  acknowledgeFindings,
  requireKnownGroup,
  restorePlan,
} from '../../functions/reconciling/restore-actions.js';
import { countingClient } from '../helpers/counting-client.js';
import { FakeCluster } from '../helpers/fake-cluster.js';
import { localTablesForFile } from '../helpers/local-tables.js';

// Issue 31, reads bounded by work: restore (and the offset-repair workflow's plan-repair, which
// calls the same restorePlan) and acknowledge read one group's offset history, the items under
// its partition key, not the whole table. Items read are counted around the real adapter's
// client on the local DynamoDB API, beside 3,000 other groups' history.

const MINUTE = 60_000;
const T0 = Date.parse('2026-12-02T06:00:00Z');
const OTHERS = 3_000;

describe("one group's offset history on DynamoDB, beside thousands of groups", () => {
  const { documents, table } = localTablesForFile('group-history');
  const cluster = new FakeCluster();
  cluster.topics.set('orders', [
    { logStart: 0, logEnd: 100 },
    { logStart: 0, logEnd: 100 },
  ]);
  const commits = new Map([
    ['orders#0', 90],
    ['orders#1', 95],
  ]);
  // Empty (no members): its offsets may be restored, and a rewind is held as a finding.
  cluster.groups.set('target', { state: 'Empty', members: [], commits });
  let now = T0;
  const historyTable = () => table('OffsetHistoryTable');
  const reconcile = () =>
    createReconciler(
      {
        source: cluster.source(() => now),
        history: createOffsetHistory(documents, historyTable()),
        mappings: createMappingStore(documents, table('MappingsTable')),
        reports: createReportStore(documents, table('ReconcileReportsTable')),
      },
      { windowSize: 3, graceMs: 10 * MINUTE, retentionMs: 14 * 1440 * MINUTE, pruneBudget: 100 },
    ).run();
  const scanAll = async () =>
    (await documents.send(new ScanCommand({ TableName: historyTable(), ConsistentRead: true })))
      .Items ?? [];

  it('restore, plan-repair and acknowledge read the group, not the table', async () => {
    await reconcile();
    now += MINUTE;
    commits.set('orders#0', 40); // a rewind: the plan returns partition 0 to 90
    commits.delete('orders#1'); // its commit gone: LOST, a held finding to acknowledge
    await reconcile();
    const own = await scanAll();
    expect(own.length).toBe(1); // one item: the group's one topic, one chunk of partitions
    // Thousands of other groups' history, as reconcile stores it (the same item under their key).
    const others = Array.from({ length: OTHERS }, (_, i) => ({
      ...own[0],
      group: `other-${i}`,
      ...shardAttributes(`other-${i}`),
    }));
    await batchPut(documents, historyTable(), others, 'seeding other groups', 8);

    const { client, read } = countingClient(documents, [historyTable()]);
    const history = createOffsetHistory(client, historyTable());
    // Kafka's answer for a group it does not hold: the history alone decides 404.
    const offsets = { groupState: async () => 'Dead', setOffsets: async () => {} };
    const rt = { history, offsets };
    const plan = await restorePlan(rt, 'target');
    expect(plan.partitions).toEqual([
      expect.objectContaining({ topic: 'orders', partition: 0, current: 40, target: 90 }),
      expect.objectContaining({ topic: 'orders', partition: 1, current: null, target: 95 }),
    ]);
    expect(read.items).toBe(1);
    // The same plan as from the whole table (the read it replaces), which reads every group.
    const whole = await createOffsetHistory(client, historyTable()).loadAll();
    expect(read.items).toBe(1 + OTHERS + 1);
    expect(plan).toEqual(planRestore('target', historyEntries(whole)));

    read.items = 0;
    const acknowledged = await acknowledgeFindings(rt, 'target', now + MINUTE);
    expect(acknowledged).toEqual([
      expect.objectContaining({ topic: 'orders', partition: 1, status: 'LOST' }),
    ]);
    expect(read.items).toBe(1);

    read.items = 0;
    await requireKnownGroup(rt, 'target'); // known by its history: no error
    await expect(requireKnownGroup(rt, 'nobody')).rejects.toBeInstanceOf(NotFoundError);
    expect(read.items).toBe(1); // the target's one item; nobody has none
  });
});
