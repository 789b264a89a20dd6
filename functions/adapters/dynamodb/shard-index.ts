import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type ShardRange, shardKey } from '../../core/reconcile/group-shards.js';
import { readAll } from './read-all.js';

// The `byShard` index of the mappings and offset-history tables (infra/resources/tables.yml):
// every item carries its group's `shardBucket` (partition key) and `shardHash` (sort key), so one
// child of the reconcile fan-out reads its own groups' items, a hash range in a few buckets,
// however many groups the other shards hold. The index is eventually consistent: an item read
// stale loses its conditional write (a conflict, retried next run), it never overwrites.

export const SHARD_INDEX = 'byShard';

/** The attributes that place an item of `group` in the index (set on every write). */
export function shardAttributes(group: string): { shardBucket: number; shardHash: number } {
  const { bucket, hash } = shardKey(group);
  return { shardBucket: bucket, shardHash: hash };
}

/** Every item of the groups `range` owns: one Query per bucket it spans, page after page. */
export async function readShard(
  client: DynamoDBDocumentClient,
  tableName: string,
  range: ShardRange,
  doing: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for (const { bucket, from, to } of range.buckets) {
    const query = {
      TableName: tableName,
      IndexName: SHARD_INDEX,
      KeyConditionExpression: 'shardBucket = :bucket AND shardHash BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':bucket': bucket, ':from': from, ':to': to },
    };
    items.push(...(await readAll(client, { query }, `${doing} (shard ${range.shard})`)));
  }
  return items;
}
