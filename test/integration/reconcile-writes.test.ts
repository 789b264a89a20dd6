import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createMappingStore } from '../../functions/adapters/dynamodb/mapping-store.js';
import { createOffsetHistory } from '../../functions/adapters/dynamodb/offset-history.js';
import { createReportStore } from '../../functions/adapters/dynamodb/report-store.js';
import { createReconciler } from '../../functions/core/reconcile/reconciler.js';
import { FakeCluster } from '../helpers/fake-cluster.js';
import { localTablesForFile } from '../helpers/local-tables.js';

// What a reconcile run writes to DynamoDB, counted as requests on the real adapters: proportional
// to what moved, not to the groups and partitions read.

const MINUTE = 60_000;
const START = Date.parse('2026-03-01T00:00:00Z');
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);

describe('reconcile writes on DynamoDB', () => {
  const { documents, table } = localTablesForFile('writes');
  const writes: Record<string, number> = {};
  documents.middlewareStack.add(
    (next, context) => (args) => {
      // The document client's commands run as the base client's (PutItemCommand…).
      const name = String(context.commandName).replace(/Command$/, '');
      if (WRITES.has(name)) writes[name] = (writes[name] ?? 0) + 1;
      return next(args);
    },
    { step: 'initialize', name: 'countWrites' },
  );
  const counted = () => {
    const out = { ...writes };
    for (const name of Object.keys(writes)) delete writes[name];
    return out;
  };

  it('writes one history item per group that moved, and the reports in batches of 25', async () => {
    const N = 40;
    const K = 5;
    let now = START;
    const cluster = new FakeCluster();
    cluster.topics.set(
      'orders',
      Array.from({ length: 10 }, () => ({ logStart: 0, logEnd: 3 })),
    );
    const legacyKey = { group: 'g00', partition: 'orders#9' };
    // An item of the old per-partition shape: read, moved into the group's item, deleted.
    await documents.send(
      new PutCommand({
        TableName: table('OffsetHistoryTable'),
        Item: {
          ...legacyKey,
          window: JSON.stringify([
            { observedAt: START - MINUTE, committed: 3, logStart: 0, logEnd: 3 },
          ]),
          version: 2,
        },
      }),
    );
    for (let g = 0; g < N; g++) {
      cluster.groups.set(`g${String(g).padStart(2, '0')}`, {
        state: 'Empty',
        members: [],
        commits: new Map(Array.from({ length: 10 }, (_, p) => [`orders#${p}`, 2])),
      });
    }
    const reconciler = createReconciler(
      {
        source: cluster.source(() => now),
        history: createOffsetHistory(documents, table('OffsetHistoryTable')),
        mappings: createMappingStore(documents, table('MappingsTable')),
        reports: createReportStore(documents, table('ReconcileReportsTable')),
      },
      { windowSize: 10, graceMs: 0, retentionMs: 14 * 1440 * MINUTE, pruneBudget: 100 },
    );
    /** Batches of 25 for `latest` of every group, and a dated report and index mark per `dated`. */
    const batches = (dated: number) => Math.ceil((N + 2 * dated) / 25);
    counted(); // not the setup's put

    const cold = await reconciler.run();
    // g00 partition 9 went from 3 to 2: the legacy window was kept.
    expect(cold.groups[0]?.partitions[9]).toMatchObject({ status: 'REWIND' });
    // Cold: an item per group, the legacy item deleted, every group's reports and index mark,
    // and (its topics new) its item in the topic index, then the topic list's one item.
    expect(counted()).toEqual({
      PutItem: N,
      DeleteItem: 1,
      BatchWriteItem: Math.ceil((N + 2 * N + N) / 25) + 1,
    });
    const stored = (
      await documents.send(
        new ScanCommand({ TableName: table('OffsetHistoryTable'), ConsistentRead: true }),
      )
    ).Items;
    expect(stored?.map((item) => item.partition)).toEqual(Array(N).fill('orders#w0'));

    // Nothing moved. The findings changed (STALL on a first reading, STOP from the second), so
    // every group's dated report is stored once more; then only `latest`, the time lag moving.
    now += 15 * MINUTE;
    await reconciler.run();
    expect(counted()).toEqual({ BatchWriteItem: batches(N) });
    now += 15 * MINUTE;
    await reconciler.run();
    expect(counted()).toEqual({ BatchWriteItem: batches(0) });

    // K groups commit on: K history items, K dated reports (their partition is OK now).
    for (let g = 0; g < K; g++) {
      cluster.groups.get(`g${String(g).padStart(2, '0')}`)?.commits.set('orders#1', 3);
    }
    now += 15 * MINUTE;
    const moved = await reconciler.run();
    expect(moved.historyConflicts).toBe(0);
    expect(counted()).toEqual({ PutItem: K, BatchWriteItem: batches(K) });
  });
});
