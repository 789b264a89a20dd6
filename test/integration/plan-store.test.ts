import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPlanStore } from '../../functions/adapters/dynamodb/plan-store.js';
import { planRestore } from '../../functions/core/restore.js';
import { planDigest } from '../../functions/core/stored-plan.js';
import { createLocalTables, localDynamoDbClient } from '../../infra/local/local-tables.js';
import { uniqueName } from '../helpers/unique-name.js';

// Restore plans kept aside for offset-repair, against the local DynamoDB API: a plan of a group on
// thousands of partitions (megabytes, DynamoDB items hold 400 KB) comes back whole and in order,
// with the digest it was approved under.
describe('plan store', () => {
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

  it('finds no plan under another id or another group', async () => {
    const store = createPlanStore(documents, tables.ReconcileReportsTable as string);
    const plan = planOf(uniqueName('group'), 3);
    await store.save('aaaaaaaa-2222-4333-8444-555555555555', plan, planDigest(plan));
    expect(await store.load(plan.group, 'aaaaaaaa-2222-4333-8444-000000000000')).toBeUndefined();
    expect(await store.load('another', 'aaaaaaaa-2222-4333-8444-555555555555')).toBeUndefined();
  });
});
