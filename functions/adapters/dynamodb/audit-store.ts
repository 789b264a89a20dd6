import { gunzipSync, gzipSync } from 'node:zlib';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditReport } from '../../core/audit.js';
import { CheckpointTooLargeError } from '../../core/audit-retention.js';
import type { CheckpointJson } from '../../core/audit-state.js';
import { ConflictError } from '../../core/errors.js';
import { dynamoDbUnavailable } from './client.js';

const KEEP_DAYS = 30;
/**
 * DynamoDB's item limit is 400 KB; keep room for the other attributes. The audit keeps its
 * checkpoint far below (folding detail older than its retention horizon): this is the backstop.
 */
export const MAX_CHECKPOINT_BYTES = 380 * 1024;

const checkpointId = (topic: string) => `checkpoint#${topic}`;

/**
 * Audit reports by id, kept 30 days; and per topic the audit's checkpoint (gzipped JSON with a
 * version number, written only over the version it was read at, so two audits of one topic at
 * once cannot both save).
 */
export function createAuditStore(client: DynamoDBDocumentClient, tableName: string) {
  const getItem = async (auditId: string, doing: string) => {
    try {
      const { Item } = await client.send(
        new GetCommand({ TableName: tableName, Key: { auditId }, ConsistentRead: true }),
      );
      return Item;
    } catch (error) {
      throw dynamoDbUnavailable(doing, error);
    }
  };
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
      const item = await getItem(auditId, `reading audit ${auditId}`);
      return typeof item?.report === 'string'
        ? (JSON.parse(item.report) as AuditReport)
        : undefined;
    },

    async load(topic: string): Promise<{ state: CheckpointJson; version: number } | undefined> {
      const item = await getItem(checkpointId(topic), `reading the audit checkpoint of ${topic}`);
      if (!(item?.state instanceof Uint8Array)) return undefined;
      return {
        state: JSON.parse(gunzipSync(item.state).toString('utf8')) as CheckpointJson,
        version: Number(item.version),
      };
    },
    async saveCheckpoint(topic: string, state: CheckpointJson, version: number): Promise<void> {
      const packed = gzipSync(JSON.stringify(state));
      if (packed.length > MAX_CHECKPOINT_BYTES) {
        throw new CheckpointTooLargeError(topic, packed.length, MAX_CHECKPOINT_BYTES);
      }
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              auditId: checkpointId(topic),
              topic,
              state: packed,
              version: version + 1,
              at: new Date().toISOString(),
            },
            ConditionExpression: 'attribute_not_exists(auditId) OR version = :version',
            ExpressionAttributeValues: { ':version': version },
          }),
        );
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) {
          throw new ConflictError(
            `another audit of ${topic} saved its checkpoint first: this run's findings are not kept; run again`,
          );
        }
        throw dynamoDbUnavailable(`storing the audit checkpoint of ${topic}`, error);
      }
    },
  };
}
