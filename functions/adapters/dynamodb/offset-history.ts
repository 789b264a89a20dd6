import { DeleteCommand, type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { OffsetObservation } from '../../core/reconcile/offsets/offset-status.js';
import type {
  HistoryEntry,
  HistoryItem,
  OffsetHistory,
  StoredHistory,
} from '../../core/reconcile/ports.js';
import { conditional } from './conditional.js';
import { decodeParts, encodeParts } from './history-codec.js';
import { readAll } from './read-all.js';
import { readShard, shardAttributes } from './shard-index.js';

/** Stored items as the history's items, and legacy entries of the old per-partition shape. */
function parse(stored: readonly Record<string, unknown>[]): StoredHistory {
  const items: HistoryItem[] = [];
  const legacy: HistoryEntry[] = [];
  for (const item of stored) {
    const group = String(item.group);
    const version = Number(item.version);
    if (typeof item.parts === 'string') {
      items.push({
        group,
        id: String(item.partition),
        topic: String(item.topic),
        partitions: decodeParts(item.parts),
        version,
        ...(item.shardHash === undefined && { unindexed: true }),
      });
    } else {
      const window = JSON.parse(String(item.window)) as OffsetObservation[];
      legacy.push({ group, key: String(item.partition), window, version });
    }
  }
  return { items, legacy };
}

/**
 * Offset history: one item per group, topic and chunk of partitions (sort key `topic#w<chunk>`,
 * attribute `parts`), versioned so two overlapping runs cannot interleave their windows, nor
 * one delete what the other just saved. Items of the old shape (one per partition, sort key
 * `topic#<partition>`, attribute `window`) are read as legacy and removed once migrated.
 */
export function createOffsetHistory(
  client: DynamoDBDocumentClient,
  tableName: string,
): OffsetHistory {
  return {
    async loadAll(range) {
      const doing = 'reading the offset history';
      return parse(
        range
          ? await readShard(client, tableName, range, doing)
          : await readAll(client, { scan: { TableName: tableName, ConsistentRead: true } }, doing),
      );
    },
    async loadGroup(group) {
      // The group is the table's partition key: its own items, read consistently, whatever
      // the other groups hold (restore, plan-repair and acknowledge ask for one group).
      const query = {
        TableName: tableName,
        KeyConditionExpression: '#group = :group',
        ExpressionAttributeNames: { '#group': 'group' },
        ExpressionAttributeValues: { ':group': group },
        ConsistentRead: true,
      };
      return parse(await readAll(client, { query }, `reading the offset history of ${group}`));
    },
    save(item, partitions) {
      const put = new PutCommand({
        TableName: tableName,
        Item: {
          group: item.group,
          partition: item.id,
          topic: item.topic,
          parts: encodeParts(partitions),
          version: item.version + 1,
          ...shardAttributes(item.group),
        },
        ConditionExpression: 'attribute_not_exists(#group) OR version = :read',
        ExpressionAttributeNames: { '#group': 'group' },
        ExpressionAttributeValues: { ':read': item.version },
      });
      return conditional(() => client.send(put), `saving offset history of ${item.group}`);
    },
    remove(item) {
      return removeAt(item.group, item.id, item.version);
    },
    removeLegacy(entry) {
      return removeAt(entry.group, entry.key, entry.version);
    },
  };

  function removeAt(group: string, sortKey: string, version: number) {
    const remove = new DeleteCommand({
      TableName: tableName,
      Key: { group, partition: sortKey },
      ConditionExpression: 'version = :read',
      ExpressionAttributeValues: { ':read': version },
    });
    return conditional(() => client.send(remove), `removing offset history of ${group}`);
  }
}
