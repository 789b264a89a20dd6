import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createReceiptsStore } from '../../../../functions/adapters/dynamodb/receipts-store.js';
import type { BucketCount } from '../../../../functions/core/receipts/receipts-input.js';

// The count-only receipts read by write time: the query the adapter sends (the sort key starts
// with the ISO write time) and what it hands over, page by page. On dynalite:
// test/integration/audit-counts-since.test.ts.

const documents = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const dynamo = mockClient(documents);
const T = Date.parse('2026-12-01T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const bucket = (at: number, count: number): BucketCount => ({
  start: iso(at),
  end: iso(at + 60_000),
  count,
});
const item = (writtenAt: number, buckets: BucketCount[]) => ({
  pk: 'billing#topic:orders',
  sk: `${iso(writtenAt)}#AbCdEfGh`,
  buckets: JSON.stringify(buckets),
});

describe('createReceiptsStore: countsSince', () => {
  beforeEach(() => dynamo.reset());

  it('queries the sort keys from the millisecond after `after`, and hands over each post with its write time', async () => {
    dynamo
      .on(QueryCommand)
      .resolvesOnce({
        Items: [item(T + 1, [bucket(T, 2)])],
        LastEvaluatedKey: { pk: 'x', sk: 'y' },
      })
      .resolvesOnce({ Items: [item(T + 5, [bucket(T, 1), bucket(T + 60_000, 3)])] });
    const store = createReceiptsStore(documents, 'receipts');
    const seen: Array<[BucketCount[], number]> = [];
    await store.countsSince('billing', 'orders', T, (buckets, at) => seen.push([[...buckets], at]));
    expect(seen).toEqual([
      [[bucket(T, 2)], T + 1],
      [[bucket(T, 1), bucket(T + 60_000, 3)], T + 5],
    ]);
    const calls = dynamo.commandCalls(QueryCommand).map((c) => c.args[0].input);
    expect(calls).toHaveLength(2);
    expect(calls[0]).toEqual({
      TableName: 'receipts',
      KeyConditionExpression: 'pk = :pk AND sk >= :from',
      ExpressionAttributeValues: { ':pk': 'billing#topic:orders', ':from': iso(T + 1) },
      ConsistentRead: true,
    });
    expect(calls[1]?.ExclusiveStartKey).toEqual({ pk: 'x', sk: 'y' });
  });

  it('reads the whole partition without `after`', async () => {
    dynamo.on(QueryCommand).resolves({ Items: [item(T, [bucket(T, 4)])] });
    const store = createReceiptsStore(documents, 'receipts');
    const seen: number[] = [];
    await store.countsSince('billing', 'orders', undefined, (buckets) =>
      seen.push(...buckets.map((b) => b.count)),
    );
    expect(seen).toEqual([4]);
    expect(dynamo.commandCalls(QueryCommand)[0]?.args[0].input).toMatchObject({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': 'billing#topic:orders' },
    });
  });

  it('dates count-only receipts by its clock, so a read after a time finds them by it', async () => {
    dynamo.on(PutCommand).resolves({});
    const store = createReceiptsStore(documents, 'receipts', () => T + 42);
    await store.writeBuckets('billing', 'orders', [bucket(T, 3)]);
    const put = dynamo.commandCalls(PutCommand)[0]?.args[0].input;
    expect(String(put?.Item?.sk).startsWith(`${iso(T + 42)}#`)).toBe(true);
    expect(put?.Item).toMatchObject({ pk: 'billing#topic:orders', count: 3 });
  });
});
