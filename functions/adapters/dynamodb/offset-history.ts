import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { OffsetObservation } from '../../core/offset-status.js';
import type { HistoryEntry, OffsetHistory } from '../../core/reconcile-ports.js';
import { dynamoDbUnavailable } from './client.js';
import { readAll } from './read-all.js';

/**
 * Offset history: one item per (group, topic#partition) holding its window of observations,
 * versioned so two overlapping runs cannot interleave their windows.
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
    async save(entry, window) {
      try {
        await client.send(
          new PutCommand({
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
          }),
        );
        return true;
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return false;
        throw dynamoDbUnavailable(`saving offset history of ${entry.group}`, error);
      }
    },
  };
}
