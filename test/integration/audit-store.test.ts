import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createAuditStore,
  MAX_REPORTS_PER_TOPIC,
  reportsToKeep,
} from '../../functions/adapters/dynamodb/audit-store.js';
import type { AuditReport } from '../../functions/core/audit/ports.js';
import { createLocalTables, localDynamoDbClient } from '../../infra/local/local-tables.js';
import { uniqueName } from '../helpers/unique-name.js';

// Stored audit reports over months, on the local DynamoDB API (which, like TTL on a bad day,
// never expires anything): each save deletes its topic's reports past 30 days or past the cap,
// and a report too large for one item as JSON is stored gzipped.
const DAY = 86_400_000;
const START = Date.parse('2026-03-01T00:00:00Z');

const report = (topic: string, at: number, streams: AuditReport['streams'] = []) =>
  ({
    topic,
    at: new Date(at).toISOString(),
    complete: true,
    scanned: 0,
    scannedTotal: 0,
    untracked: 0,
    unread: 0,
    checkpoint: [],
    streams,
    topicBuckets: [],
    settled: { landed: 0, notWritten: 0 },
  }) as AuditReport;

describe('audit report storage', () => {
  const client = localDynamoDbClient(inject('dynamodbEndpoint'));
  const documents = DynamoDBDocumentClient.from(client);
  let table = '';

  beforeAll(async () => {
    const tables = await createLocalTables(client, `${uniqueName('audits')}-`);
    table = String(tables.AuditsTable);
  });
  afterAll(async () => {
    await client.send(new DeleteTableCommand({ TableName: table }));
    client.destroy();
  });

  it("deletes a topic's reports older than 30 days when a newer one is saved", async () => {
    const store = createAuditStore(documents, table);
    for (let day = 0; day < 40; day++) {
      await store.save(`a-${day}`, report('orders', START + day * DAY), START + day * DAY);
      await store.save(`other-${day}`, report('other', START + day * DAY), START + day * DAY);
    }
    const { Items = [] } = await documents.send(new ScanCommand({ TableName: table }));
    const orders = Items.filter(
      (item) => item.topic === 'orders' && item.auditId !== 'reports#orders',
    );
    // Days 9..39: the 31 within 30 days of the newest; each topic's index is its own.
    expect(orders.map((item) => item.auditId).sort()).toEqual(
      Array.from({ length: 31 }, (_, i) => `a-${i + 9}`).sort(),
    );
    expect(await store.get('a-8')).toBeUndefined();
    expect(await store.get('a-9')).toMatchObject({ topic: 'orders' });
    expect(Items.filter((item) => item.topic === 'other')).toHaveLength(31 + 1);
  });

  it('stores a report over 400 KB as JSON gzipped, and reads it back whole', async () => {
    const store = createAuditStore(documents, table);
    const streams = Array.from({ length: 80 }, (_, i) => ({
      stream: `stream-${i}`,
      lost: Array.from({ length: 100 }, (_, j) => ({ from: j * 10, to: j * 10 + 5 })),
      pending: Array.from({ length: 100 }, (_, j) => ({ group: `group-${j}`, from: j, to: j })),
    })) as unknown as AuditReport['streams'];
    const big = report('big', START, streams);
    expect(JSON.stringify(big).length).toBeGreaterThan(400 * 1024);
    await store.save('big-1', big, START);
    expect(await store.get('big-1')).toEqual(big);
  });

  it('keeps at most MAX_REPORTS_PER_TOPIC ids, dropping the oldest', () => {
    const entries = Array.from({ length: MAX_REPORTS_PER_TOPIC }, (_, i): [string, number] => [
      `r-${i}`,
      START + i,
    ]);
    const { keep, drop } = reportsToKeep(entries, ['new', START + DAY], START + DAY);
    expect(keep).toHaveLength(MAX_REPORTS_PER_TOPIC);
    expect(drop).toEqual([['r-0', START]]);
    expect(keep.at(-1)).toEqual(['new', START + DAY]);
  });
});
