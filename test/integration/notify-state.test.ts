import { createHash } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createIncidentStore,
  createNotedStore,
} from '../../functions/adapters/dynamodb/notify-state.js';
import { readAll } from '../../functions/adapters/dynamodb/read-all.js';
import { createReportStore } from '../../functions/adapters/dynamodb/report-store.js';
import { log } from '../../functions/platform/log.js';
import { createLocalTables, localDynamoDbClient } from '../../infra/local/local-tables.js';
import { uniqueName } from '../helpers/unique-name.js';

// The notifiers' state against the local DynamoDB API: single-item writes conditional on the
// version read (no transactions there), so of two runs that read the same version only one writes.
describe('notification state in DynamoDB', () => {
  const client = localDynamoDbClient(inject('dynamodbEndpoint'));
  const documents = DynamoDBDocumentClient.from(client);
  let tables: Record<string, string> = {};

  beforeAll(async () => {
    tables = await createLocalTables(client, `${uniqueName('notify')}-`);
  });
  afterAll(async () => {
    for (const TableName of Object.values(tables)) {
      await client.send(new DeleteTableCommand({ TableName }));
    }
    client.destroy();
  });

  const incident = { id: 'i-1', start: 1_000, status: 'ERR' as const, notifiedAt: 1_000 };

  it('keeps one incident per group, written and removed only over the version read', async () => {
    const table = tables.ReconcileReportsTable as string;
    const store = createIncidentStore(documents, table);
    expect(await store.save('billing', incident, 0)).toBe(true);
    expect(await store.save('billing', { ...incident, id: 'i-2' }, 0)).toBe(false);
    expect(await store.save('orders', { ...incident, status: 'WARN' }, 0)).toBe(true);
    const loaded = await store.load();
    expect(loaded.get('billing')).toEqual({ incident, version: 1 });
    expect(loaded.get('orders')?.incident.status).toBe('WARN');
    expect(await store.save('billing', { ...incident, notifiedAt: 2_000 }, 1)).toBe(true);
    expect(await store.remove('billing', 1)).toBe(false);
    expect(await store.remove('billing', 2)).toBe(true);
    expect([...(await store.load()).keys()]).toEqual(['orders']);
    // Beside the reports of the same table, never taken for a group's own items.
    expect(await createReportStore(documents, table).reportedGroups()).toEqual(new Map());
  });

  it('keeps the counts last notified per topic, written only over the version read', async () => {
    const store = createNotedStore(documents, tables.AuditsTable as string, log);
    expect(await store.load('orders')).toEqual({ streams: new Map(), version: 0 });
    const counts = { lost: 2, producerDuplicates: 0, consumerDuplicates: { billing: 1 } };
    expect(await store.save('orders', new Map([['orders', counts]]), 0)).toBe(true);
    expect(await store.save('orders', new Map(), 0)).toBe(false);
    expect(await store.load('orders')).toEqual({
      streams: new Map([['orders', counts]]),
      version: 1,
    });
  });

  it("keeps a large user's counts (20,000 streams with findings) in items under 400 KB", async () => {
    const table = tables.AuditsTable as string;
    const store = createNotedStore(documents, table, log);
    // Names that gzip poorly (hex digests), and consumer duplicates in two groups: ~2.5 MB of JSON.
    const streams = (round: number) =>
      new Map(
        Array.from({ length: 20_000 }, (_, i) => [
          `stream-${createHash('sha256').update(String(i)).digest('hex').slice(0, 32)}`,
          {
            lost: i % 7,
            producerDuplicates: (i + round) % 3,
            consumerDuplicates: { billing: i % 11, 'shipping-eu-west-1': round },
          },
        ]),
      );
    expect(JSON.stringify([...streams(1)]).length).toBeGreaterThan(2 * 409_600);
    // dynalite refuses an item over 400 KB as DynamoDB does (dynamodb-item-size.test.ts).
    expect(await store.save('big', streams(1), 0)).toBe(true);
    expect(await store.load('big')).toEqual({ streams: streams(1), version: 1 });
    const partsOf = async () =>
      (await readAll(documents, { scan: { TableName: table, ConsistentRead: true } }, 'scan'))
        .map((item) => String(item.auditId))
        .filter((id) => id.startsWith('notified#big#'));
    const first = await partsOf();
    expect(first.length).toBeGreaterThan(1);
    // Written over the version read: the loser's parts go, the winner's replace the old ones.
    expect(await store.save('big', streams(2), 0)).toBe(false);
    expect(await store.save('big', streams(2), 1)).toBe(true);
    expect(await store.load('big')).toEqual({ streams: streams(2), version: 2 });
    const second = await partsOf();
    expect(second.length).toBeGreaterThan(1);
    expect(second.filter((id) => first.includes(id))).toEqual([]);
    // Back to a few streams: inline again, no part left.
    const few = new Map([...streams(3)].slice(0, 3));
    expect(await store.save('big', few, 2)).toBe(true);
    expect(await store.load('big')).toEqual({ streams: few, version: 3 });
    expect(await partsOf()).toEqual([]);
  });
});
