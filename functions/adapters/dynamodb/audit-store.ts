import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditReport } from '../../core/audit.js';
import { dynamoDbUnavailable } from './client.js';

const KEEP_DAYS = 30;

/** Audit reports by id, kept 30 days. */
export function createAuditStore(client: DynamoDBDocumentClient, tableName: string) {
  return {
    async save(auditId: string, report: AuditReport): Promise<void> {
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              auditId,
              topic: report.topic,
              at: report.at,
              report: JSON.stringify(report),
              expiresAt: Math.floor(Date.now() / 1000) + KEEP_DAYS * 86_400,
            },
          }),
        );
      } catch (error) {
        throw dynamoDbUnavailable(`storing audit ${auditId}`, error);
      }
    },
    async get(auditId: string): Promise<AuditReport | undefined> {
      try {
        const { Item } = await client.send(
          new GetCommand({ TableName: tableName, Key: { auditId }, ConsistentRead: true }),
        );
        return Item ? (JSON.parse(String(Item.report)) as AuditReport) : undefined;
      } catch (error) {
        throw dynamoDbUnavailable(`reading audit ${auditId}`, error);
      }
    },
  };
}
