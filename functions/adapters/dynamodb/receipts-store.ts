import { randomBytes } from 'node:crypto';
import { BatchWriteCommand, type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ReceiptBatch } from '../../core/receipts/msk-receipts.js';
import type { BucketCount } from '../../core/receipts/receipts-input.js';
import { dynamoDbUnavailable } from './client.js';
import { forEachPage, readPartition } from './read-all.js';

const BATCH_WRITE_LIMIT = 25;

/** Receipts: one item per received batch, `pk = group#stream`, `sk = time#random`. */
export function createReceiptsStore(client: DynamoDBDocumentClient, tableName: string) {
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
      const receivedAt = new Date().toISOString();
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
    // ISO times of one length sort as text: `sk >= the next ms` is every receipt written after.
    const from = after === undefined ? undefined : new Date(after + 1).toISOString();
    await forEachPage(
      client,
      {
        query: {
          TableName: tableName,
          KeyConditionExpression: from === undefined ? 'pk = :pk' : 'pk = :pk AND sk >= :from',
          ExpressionAttributeValues: {
            ':pk': `${group}#${stream}`,
            ...(from && { ':from': from }),
          },
          ConsistentRead: true,
        },
      },
      `reading receipts of ${group} for ${stream}`,
      (items) => {
        for (const i of items) {
          const sk = String(i.sk);
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
            Date.parse(sk.slice(0, sk.indexOf('#'))),
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
              sk: `${new Date().toISOString()}#${randomBytes(6).toString('base64url')}`,
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
  };
}
