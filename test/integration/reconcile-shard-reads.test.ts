import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createMappingStore } from '../../functions/adapters/dynamodb/mapping-store.js';
import { createOffsetHistory } from '../../functions/adapters/dynamodb/offset-history.js';
import { createReportStore } from '../../functions/adapters/dynamodb/report-store.js';
import { shardOf, shardScope } from '../../functions/core/reconcile/group-shards.js';
import { createReconciler } from '../../functions/core/reconcile/reconciler.js';
import { countingClient } from '../helpers/counting-client.js';
import { FakeCluster } from '../helpers/fake-cluster.js';
import { localTablesForFile } from '../helpers/local-tables.js';

// Issue 31, reads bounded by work: a child of the reconcile fan-out reads its own shard's
// mappings and offset history (the byShard index), not the whole tables. Items read are counted
// by a wrapper around the real adapters' client, on the local DynamoDB API.

const MINUTE = 60_000;
const T0 = Date.parse('2026-12-01T06:00:00Z');
const SHARDS = 4;

const groupIds = (count: number, keep: (id: string) => boolean, tag: string) => {
  const ids: string[] = [];
  for (let i = 0; ids.length < count; i++) if (keep(`${tag}-${i}`)) ids.push(`${tag}-${i}`);
  return ids;
};

describe('reconcile fan-out reads on DynamoDB', () => {
  const { documents, table } = localTablesForFile('shard-reads');
  const cluster = new FakeCluster();
  cluster.topics.set('orders', [
    { logStart: 0, logEnd: 100 },
    { logStart: 0, logEnd: 100 },
  ]);
  const addGroup = (id: string) =>
    cluster.groups.set(id, {
      state: 'Stable',
      members: [
        {
          memberId: `m-${id}`,
          clientId: id,
          clientHost: '/10.0.0.1',
          assignment: { orders: [0, 1] },
        },
      ],
      commits: new Map([
        ['orders#0', 90],
        ['orders#1', 95],
      ]),
    });
  let now = T0;
  const reconcilerOver = (client: DynamoDBDocumentClient) =>
    createReconciler(
      {
        source: cluster.source(() => now),
        history: createOffsetHistory(client, table('OffsetHistoryTable')),
        mappings: createMappingStore(client, table('MappingsTable')),
        reports: createReportStore(client, table('ReconcileReportsTable')),
      },
      { windowSize: 3, graceMs: 10 * MINUTE, retentionMs: 14 * 1440 * MINUTE, pruneBudget: 100 },
    );
  // The reports table is read per group, but for the index of reported groups (report-store.ts),
  // which is not this test's subject.
  const counted = () =>
    countingClient(documents, [table('MappingsTable'), table('OffsetHistoryTable')]);
  const childReads = async () => {
    const { client, read } = counted();
    now += MINUTE;
    const report = await reconcilerOver(client).run(shardScope(0, SHARDS));
    expect(report.complete).toBe(true);
    return { items: read.items, groups: report.groups.length };
  };
  const scanned = async (id: string) =>
    (await documents.send(new ScanCommand({ TableName: table(id), ConsistentRead: true }))).Items ??
    [];

  it("a child's reads of mappings and history grow with its own groups, not the other shards'", async () => {
    const own = groupIds(6, (id) => shardOf(id, SHARDS) === 0, 'own');
    for (const id of [...own, ...groupIds(18, (id) => shardOf(id, SHARDS) !== 0, 'other')])
      addGroup(id);
    await reconcilerOver(documents).run(); // the whole cluster, once: every table holds all
    const first = await childReads();
    expect(first.groups).toBe(own.length);
    // Per own group: 1 client and 2 partition mappings, 1 history item (one chunk of partitions).
    expect(first.items).toBe(own.length * (3 + 1));

    // Ten times as many groups in the other shards: the child reads what it read before.
    for (const id of groupIds(180, (id) => shardOf(id, SHARDS) !== 0, 'more')) addGroup(id);
    await reconcilerOver(documents).run();
    expect((await scanned('MappingsTable')).length).toBe((6 + 18 + 180) * 3);
    const second = await childReads();
    expect(second.groups).toBe(own.length);
    expect(second.items).toBe(first.items);
  });

  it('items stored before the index are invisible to a child until one unscoped run rewrites them', async () => {
    // As a table deployed before the byShard index holds them: no shard attributes.
    for (const id of ['MappingsTable', 'OffsetHistoryTable']) {
      for (const item of await scanned(id)) {
        const Key =
          id === 'MappingsTable'
            ? { pk: item.pk, sk: item.sk }
            : { group: item.group, partition: item.partition };
        await documents.send(
          new UpdateCommand({
            TableName: table(id),
            Key,
            UpdateExpression: 'REMOVE shardBucket, shardHash',
          }),
        );
      }
    }
    const { client, read } = counted();
    now += MINUTE;
    const before = await reconcilerOver(client).run(shardScope(0, SHARDS));
    // Its history items are not found, so their fresh versions lose to the stored ones: counted
    // as conflicts, nothing overwritten.
    expect(before.historyConflicts).toBeGreaterThan(0);
    expect(read.items).toBe(0);
    now += MINUTE;
    await reconcilerOver(documents).run(); // the migration: one sequential run
    const unindexed = async (id: string) =>
      (await scanned(id)).filter((item) => item.shardHash === undefined).length;
    expect(await unindexed('MappingsTable')).toBe(0);
    expect(await unindexed('OffsetHistoryTable')).toBe(0);
    const after = await childReads();
    expect(after.items).toBe(6 * (3 + 1));
  });

  // The index of reported groups (report-store.ts): one entry per group, in one partition of the
  // reports table; a child reads its own groups' entries from the table's byShard index.
  const reportsTable = () => table('ReconcileReportsTable');
  const indexEntries = async () =>
    (
      await documents.send(
        new ScanCommand({
          TableName: reportsTable(),
          ConsistentRead: true,
          FilterExpression: '#group = :index',
          ExpressionAttributeNames: { '#group': 'group' },
          ExpressionAttributeValues: { ':index': '~reconcile-groups' },
        }),
      )
    ).Items ?? [];
  const childIndexReads = async () => {
    const { client, read } = countingClient(documents, [reportsTable()]);
    now += MINUTE;
    const report = await reconcilerOver(client).run(shardScope(0, SHARDS));
    expect(report.groups.length).toBe(6);
    return read.items;
  };
  const OTHERS = 3_000;

  it("a child's reads of the index of reported groups grow with its own groups, beside thousands", async () => {
    // Thousands of groups reported in other shards (stored as a run stores them: latest, dated
    // report and index entry), none of them the child's.
    const others = groupIds(OTHERS, (id) => shardOf(id, SHARDS) !== 0, 'reported');
    await createReportStore(documents, reportsTable()).saveGroupReports(
      now,
      others.map((group) => ({ group, report: {}, dated: { body: {}, digest: 'd' } })),
    );
    expect((await indexEntries()).length).toBe(6 + 18 + 180 + OTHERS);
    // Two reads of its own 6 entries (the run's, for dated reports; the prune's), nothing else:
    // its groups' dated reports are within the retention, so the prune's key reads are empty.
    expect(await childIndexReads()).toBe(2 * 6);
  });

  it('index entries marked before the byShard index are rewritten, as they were, by one unscoped run', async () => {
    for (const { sk } of await indexEntries()) {
      await documents.send(
        new UpdateCommand({
          TableName: reportsTable(),
          Key: { group: '~reconcile-groups', sk },
          UpdateExpression: 'REMOVE shardBucket, shardHash',
        }),
      );
    }
    const before = new Map((await indexEntries()).map((e) => [e.sk, e]));
    now += MINUTE;
    await reconcilerOver(documents).run(); // the migration: one sequential run
    const after = await indexEntries();
    expect(after.filter((e) => e.shardHash === undefined)).toEqual([]);
    // As they were: the gone groups' marks and digests kept (forgotten only past 1.5 retention).
    for (const entry of after.filter((e) => String(e.sk).startsWith('group#reported-'))) {
      expect(entry).toMatchObject({ markedAt: before.get(entry.sk)?.markedAt, digest: 'd' });
    }
    expect(after.length).toBe(before.size);
    expect(await childIndexReads()).toBe(2 * 6);
  });
});
