import { randomBytes } from 'node:crypto';
import { BatchWriteCommand, type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ReceiptBatch } from '../../core/receipts/msk-receipts.js';
import type { BucketCount } from '../../core/receipts/receipts-input.js';
import { dynamoDbUnavailable } from './client.js';
import { forEachPage, readPartition } from './read-all.js';

const BATCH_WRITE_LIMIT = 25;

/** ISO times of one length sort as text: `sk >= the next ms` is every item written after `after`. */
const writtenAfter = (pk: string, after: number | undefined) => {
  const from = after === undefined ? undefined : new Date(after + 1).toISOString();
  return {
    KeyConditionExpression: from === undefined ? 'pk = :pk' : 'pk = :pk AND sk >= :from',
    ExpressionAttributeValues: { ':pk': pk, ...(from && { ':from': from }) },
  };
};

/** When an item was written: its sort key starts with the ISO time. */
const writtenAt = (sk: unknown) => {
  const key = String(sk);
  return Date.parse(key.slice(0, key.indexOf('#')));
};

/**
 * Receipts: one item per received batch, `pk = group#stream`, `sk = time#random`; count-only
 * receipts one item per post, `pk = group#topic:<topic>`, `sk = time#random`. `now` dates the
 * items (default Date.now; tests that run months inject a clock).
 */
export function createReceiptsStore(
  client: DynamoDBDocumentClient,
  tableName: string,
  now: () => number = Date.now,
) {
  const item = (batch: ReceiptBatch, receivedAt: string) => ({
    pk: `${batch.group}#${batch.stream}`,
    sk: `${receivedAt}#${randomBytes(6).toString('base64url')}`,
    group: batch.group,
    stream: batch.stream,
    topic: batch.topic,
    seqs: JSON.stringify(batch.seqs),
    suppressed: batch.suppressed && JSON.stringify(batch.suppressed),
    offsets: JSON.stringify(batch.offsets),
    count: batch.count,
    receivedAt,
  });

  async function writeAll(batches: readonly ReceiptBatch[]): Promise<void> {
    for (let i = 0; i < batches.length; i += BATCH_WRITE_LIMIT) {
      // Dated per request, not per call: the audit reads receipts by this time, less a lag that
      // must cover a request's retries, not a whole batch's.
      const receivedAt = new Date(now()).toISOString();
      let requests = batches
        .slice(i, i + BATCH_WRITE_LIMIT)
        .map((b) => ({ PutRequest: { Item: item(b, receivedAt) } }));
      for (let attempt = 0; requests.length > 0; attempt++) {
        if (attempt === 5)
          throw dynamoDbUnavailable(
            'writing receipts (items left unprocessed)',
            new Error('throttled'),
          );
        try {
          const { UnprocessedItems } = await client.send(
            new BatchWriteCommand({ RequestItems: { [tableName]: requests } }),
          );
          requests = (UnprocessedItems?.[tableName] ?? []) as typeof requests;
        } catch (error) {
          throw dynamoDbUnavailable('writing receipts', error);
        }
        if (requests.length > 0)
          await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      }
    }
  }

  async function batchesAfter(
    group: string,
    stream: string,
    after: number | undefined,
    onBatch: (batch: ReceiptBatch, receivedAt: number) => void,
  ): Promise<void> {
    await forEachPage(
      client,
      {
        query: {
          TableName: tableName,
          ...writtenAfter(`${group}#${stream}`, after),
          ConsistentRead: true,
        },
      },
      `reading receipts of ${group} for ${stream}`,
      (items) => {
        for (const i of items) {
          onBatch(
            {
              group,
              stream,
              topic: typeof i.topic === 'string' ? i.topic : undefined,
              seqs: JSON.parse(String(i.seqs)),
              ...(typeof i.suppressed === 'string' && { suppressed: JSON.parse(i.suppressed) }),
              offsets: JSON.parse(String(i.offsets)),
              count: Number(i.count),
            },
            writtenAt(i.sk),
          );
        }
      },
    );
  }

  return {
    writeAll,
    async writeBuckets(
      group: string,
      topic: string,
      buckets: readonly BucketCount[],
    ): Promise<void> {
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              pk: `${group}#topic:${topic}`,
              sk: `${new Date(now()).toISOString()}#${randomBytes(6).toString('base64url')}`,
              group,
              topic,
              buckets: JSON.stringify(buckets),
              count: buckets.reduce((sum, b) => sum + b.count, 0),
            },
          }),
        );
      } catch (error) {
        throw dynamoDbUnavailable('writing receipt counts', error);
      }
    },
    /** Every batch a group reported for a stream, oldest first, one page in memory at a time. */
    forEachBatch(
      group: string,
      stream: string,
      onBatch: (batch: ReceiptBatch) => void,
    ): Promise<void> {
      return batchesAfter(group, stream, undefined, onBatch);
    },

    /** The batches written after `after` (ms; sort keys start with the write time), oldest first. */
    forEachBatchSince(
      group: string,
      stream: string,
      after: number | undefined,
      onBatch: (batch: ReceiptBatch, receivedAt: number) => void,
    ): Promise<void> {
      return batchesAfter(group, stream, after, onBatch);
    },

    /** Every count-only receipt (per time bucket) a group posted for a topic. */
    async counts(group: string, topic: string): Promise<BucketCount[]> {
      const items = await readPartition(
        client,
        tableName,
        `${group}#topic:${topic}`,
        `reading receipt counts of ${group} for ${topic}`,
      );
      return items.flatMap((i) => JSON.parse(String(i.buckets)) as BucketCount[]);
    },

    /**
     * The count-only receipts a group posted for a topic after `after` (ms; undefined: every
     * one), oldest first, one page in memory at a time, each post's buckets with when it was
     * written: the audit reads only those since its checkpoint's (core/audit/counted-view.ts).
     */
    countsSince(
      group: string,
      topic: string,
      after: number | undefined,
      onCounts: (buckets: BucketCount[], writtenAt: number) => void,
    ): Promise<void> {
      return forEachPage(
        client,
        {
          query: {
            TableName: tableName,
            ...writtenAfter(`${group}#topic:${topic}`, after),
            ConsistentRead: true,
          },
        },
        `reading receipt counts of ${group} for ${topic}`,
        (items) => {
          for (const i of items)
            onCounts(JSON.parse(String(i.buckets)) as BucketCount[], writtenAt(i.sk));
        },
      );
    },
  };
}
