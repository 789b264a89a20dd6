import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { planCsv } from '../../core/restore.js';
import { fromRow, type PlanStore, type TargetRow, toRow } from '../../core/stored-plan.js';
import { dynamoDbUnavailable } from './client.js';
import { readAll } from './read-all.js';

// Restore plans awaiting a decision, in the reconcile reports table beside the group's reports
// (`group`, `sk = plan#<id>` and `plan#<id>#<chunk>`). A plan of a group on thousands of
// partitions is megabytes; DynamoDB items hold 400 KB, so its targets go in chunks of
// CHUNK rows (a row is at most ~300 bytes: a topic name is at most 249). The head item is written
// last: a plan whose head can be read is whole.

const CHUNK = 1000;
const KEEP_DAYS = 30;

export function createPlanStore(client: DynamoDBDocumentClient, tableName: string): PlanStore {
  const put = async (item: Record<string, unknown>) => {
    try {
      await client.send(new PutCommand({ TableName: tableName, Item: item }));
    } catch (error) {
      throw dynamoDbUnavailable(`storing ${String(item.sk)} of group ${String(item.group)}`, error);
    }
  };
  return {
    async save(planId, plan, digest) {
      const expiresAt = Math.floor(Date.now() / 1000) + KEEP_DAYS * 86_400;
      const rows = plan.partitions.map(toRow);
      const chunks = Math.ceil(rows.length / CHUNK);
      for (let i = 0; i < chunks; i++) {
        await put({
          group: plan.group,
          sk: `plan#${planId}#${String(i).padStart(5, '0')}`,
          body: JSON.stringify(rows.slice(i * CHUNK, (i + 1) * CHUNK)),
          expiresAt,
        });
      }
      await put({
        group: plan.group,
        sk: `plan#${planId}`,
        digest,
        chunks,
        count: rows.length,
        expiresAt,
      });
    },

    async load(group, planId) {
      const items = await readAll(
        client,
        {
          query: {
            TableName: tableName,
            KeyConditionExpression: '#group = :group AND begins_with(sk, :plan)',
            ExpressionAttributeNames: { '#group': 'group' },
            ExpressionAttributeValues: { ':group': group, ':plan': `plan#${planId}` },
            ConsistentRead: true,
          },
        },
        `reading plan ${planId} of group ${group}`,
      );
      const head = items.find((item) => item.sk === `plan#${planId}`);
      if (!head) return undefined;
      // Sort keys come back in order: the chunks after the head, by their padded index.
      const partitions = items
        .filter((item) => item !== head)
        .flatMap((item) => (JSON.parse(String(item.body)) as TargetRow[]).map(fromRow));
      return { group, partitions, csv: planCsv(partitions) };
    },
  };
}
