import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { planCsv } from '../../core/restore.js';
import { fromRow, type PlanStore, type TargetRow, toRow } from '../../core/stored-plan.js';
import { createChunkedItems } from './chunked-items.js';

// Restore plans awaiting a decision, in the reconcile reports table beside the group's reports
// (`sk = plan#<id>`, chunked: a plan of a group on thousands of partitions is megabytes).

const KEEP_DAYS = 30;

export function createPlanStore(client: DynamoDBDocumentClient, tableName: string): PlanStore {
  const items = createChunkedItems(client, tableName);
  return {
    async save(planId, plan, digest) {
      const expiresAt = Math.floor(Date.now() / 1000) + KEEP_DAYS * 86_400;
      await items.put(
        plan.group,
        `plan#${planId}`,
        { digest },
        plan.partitions.map(toRow),
        expiresAt,
      );
    },

    async load(group, planId) {
      const stored = await items.get(group, `plan#${planId}`);
      if (!stored) return undefined;
      const partitions = (stored.rows as TargetRow[]).map(fromRow);
      return { group, partitions, csv: planCsv(partitions) };
    },
  };
}
