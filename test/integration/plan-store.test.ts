import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPlanStore } from '../../functions/adapters/dynamodb/plan-store.js';
import { createRestoreRecords } from '../../functions/adapters/dynamodb/restore-records.js';
import { planRestore } from '../../functions/core/reconcile/restore-plan.js';
import { planDigest } from '../../functions/core/reconcile/stored-plan.js';
import { createLocalTables, localDynamoDbClient } from '../../infra/local/local-tables.js';
import { uniqueName } from '../helpers/unique-name.js';

// Restore plans kept aside for offset-repair, and records of executed restores, against the local
// DynamoDB API: those of a group on thousands of partitions (megabytes; DynamoDB items hold
// 400 KB) come back whole and in order.
describe('plan store and restore records', () => {
  const client = localDynamoDbClient(inject('dynamodbEndpoint'));
  const documents = DynamoDBDocumentClient.from(client);
  let tables: Record<string, string> = {};

  beforeAll(async () => {
    tables = await createLocalTables(client, `${uniqueName('plans')}-`);
  });
  afterAll(async () => {
    for (const TableName of Object.values(tables)) {
      await client.send(new DeleteTableCommand({ TableName }));
    }
    client.destroy();
  });

  /** A plan returning `group` from offset 500 to 1000 on `n` partitions of long-named topics. */
  const planOf = (group: string, n: number) =>
    planRestore(
      group,
      Array.from({ length: n }, (_, i) => ({
        group,
        key: `${'t'.repeat(200)}-${String(Math.floor(i / 100)).padStart(3, '0')}#${i % 100}`,
        version: 1,
        window: [
          { observedAt: 1_000, committed: 1000, logStart: 0, logEnd: 2000 },
          { observedAt: 2_000, committed: 500, logStart: 0, logEnd: 2000 },
        ],
      })),
    );

  it('keeps a plan of 5,000 partitions (about 1.2 MB) whole, in order, under its digest', async () => {
    const store = createPlanStore(documents, tables.ReconcileReportsTable as string);
    const plan = planOf(uniqueName('group'), 5_000);
    expect(JSON.stringify(plan).length).toBeGreaterThan(1_000_000);
    await store.save('11111111-2222-4333-8444-555555555555', plan, planDigest(plan));
    const loaded = await store.load(plan.group, '11111111-2222-4333-8444-555555555555');
    expect(loaded).toEqual(plan);
    expect(planDigest(loaded as typeof plan)).toBe(planDigest(plan));
  });

  it('keeps the record of a restore of 20,000 partitions (about 1.3 MB) whole, in order', async () => {
    const restores = createRestoreRecords(documents, tables.ReconcileReportsTable as string);
    const record = {
      group: uniqueName('group'),
      executedAt: '2026-11-30T12:00:00.000Z',
      partitions: Array.from({ length: 20_000 }, (_, i) => ({
        topic: `orders-${String(Math.floor(i / 100)).padStart(4, '0')}`,
        partition: i % 100,
        before: 500,
        after: 1000,
      })),
    };
    expect(JSON.stringify(record).length).toBeGreaterThan(1_000_000);
    await restores.save(record);
    expect(await restores.load(record.group, record.executedAt)).toEqual(record);
  });

  it('finds no plan under another id or another group', async () => {
    const store = createPlanStore(documents, tables.ReconcileReportsTable as string);
    const plan = planOf(uniqueName('group'), 3);
    await store.save('aaaaaaaa-2222-4333-8444-555555555555', plan, planDigest(plan));
    expect(await store.load(plan.group, 'aaaaaaaa-2222-4333-8444-000000000000')).toBeUndefined();
    expect(await store.load('another', 'aaaaaaaa-2222-4333-8444-555555555555')).toBeUndefined();
  });
});
