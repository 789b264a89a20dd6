import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ReportStore } from '../../core/reconcile-ports.js';
import { dynamoDbUnavailable } from './client.js';
import { readAll } from './read-all.js';

const HISTORY_DAYS = 14;

/** Reconcile reports per group (latest plus dated history) and executed restores. */
export function createReportStore(client: DynamoDBDocumentClient, tableName: string): ReportStore {
  const put = async (group: string, sk: string, body: object, expires: boolean) => {
    try {
      await client.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            group,
            sk,
            body: JSON.stringify(body),
            ...(expires && { expiresAt: Math.floor(Date.now() / 1000) + HISTORY_DAYS * 86_400 }),
          },
        }),
      );
    } catch (error) {
      throw dynamoDbUnavailable(`storing ${sk} of group ${group}`, error);
    }
  };
  return {
    async saveGroupReport(group, at, report) {
      await put(group, `report#${new Date(at).toISOString()}`, report, true);
      await put(group, 'latest', report, false);
    },
    async latestGroupReport(group) {
      try {
        const { Item } = await client.send(
          new GetCommand({
            TableName: tableName,
            Key: { group, sk: 'latest' },
            ConsistentRead: true,
          }),
        );
        return Item ? (JSON.parse(String(Item.body)) as object) : undefined;
      } catch (error) {
        throw dynamoDbUnavailable(`reading the latest report of group ${group}`, error);
      }
    },
    async groupReportsSince(group, since) {
      const items = await readAll(
        client,
        {
          query: {
            TableName: tableName,
            KeyConditionExpression: '#group = :group AND sk BETWEEN :from AND :to',
            ExpressionAttributeNames: { '#group': 'group' },
            ExpressionAttributeValues: {
              ':group': group,
              ':from': `report#${new Date(since).toISOString()}`,
              ':to': 'report#~',
            },
          },
        },
        `reading reports of group ${group}`,
      );
      return items.map((item) => JSON.parse(String(item.body)) as object);
    },
    async saveRestore(group, at, record) {
      // Restores are kept: they are the audit trail of offsets changed by hand.
      await put(group, `restore#${new Date(at).toISOString()}`, record, false);
    },
  };
}
