import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { OffsetObservation } from '../../core/offset-status.js';
import type { HistoryEntry, OffsetHistory } from '../../core/reconcile-ports.js';
import { dynamoDbUnavailable } from './client.js';

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
      const entries: HistoryEntry[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        let page: {
          Items?: Record<string, unknown>[] | undefined;
          LastEvaluatedKey?: Record<string, unknown> | undefined;
        };
        try {
          page = await client.send(
            new ScanCommand({
              TableName: tableName,
              ConsistentRead: true,
              ExclusiveStartKey: start,
            }),
          );
        } catch (error) {
          throw dynamoDbUnavailable('reading the offset history', error);
        }
        for (const item of page.Items ?? []) {
          entries.push({
            group: String(item.group),
            key: String(item.partition),
            window: JSON.parse(String(item.window)) as OffsetObservation[],
            version: Number(item.version),
          });
        }
        start = page.LastEvaluatedKey;
      } while (start);
      return entries;
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
