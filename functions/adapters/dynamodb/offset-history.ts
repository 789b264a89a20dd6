import { DeleteCommand, type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { OffsetObservation } from '../../core/offset-status.js';
import type { HistoryEntry, OffsetHistory } from '../../core/reconcile-ports.js';
import { conditional } from './conditional.js';
import { readAll } from './read-all.js';

/**
 * Offset history: one item per (group, topic#partition) holding its window of observations,
 * versioned so two overlapping runs cannot interleave their windows, nor one delete a window
 * the other just saved.
 */
export function createOffsetHistory(
  client: DynamoDBDocumentClient,
  tableName: string,
): OffsetHistory {
  return {
    async loadAll() {
      const items = await readAll(
        client,
        { scan: { TableName: tableName, ConsistentRead: true } },
        'reading the offset history',
      );
      return items.map(
        (item): HistoryEntry => ({
          group: String(item.group),
          key: String(item.partition),
          window: JSON.parse(String(item.window)) as OffsetObservation[],
          version: Number(item.version),
        }),
      );
    },
    save(entry, window) {
      const put = new PutCommand({
        TableName: tableName,
        Item: {
          group: entry.group,
          partition: entry.key,
          window: JSON.stringify(window),
          version: entry.version + 1,
        },
        ConditionExpression: 'attribute_not_exists(#group) OR version = :read',
        ExpressionAttributeNames: { '#group': 'group' },
        ExpressionAttributeValues: { ':read': entry.version },
      });
      return conditional(() => client.send(put), `saving offset history of ${entry.group}`);
    },
    remove(entry) {
      const remove = new DeleteCommand({
        TableName: tableName,
        Key: { group: entry.group, partition: entry.key },
        ConditionExpression: 'version = :read',
        ExpressionAttributeValues: { ':read': entry.version },
      });
      return conditional(() => client.send(remove), `removing offset history of ${entry.group}`);
    },
  };
}
