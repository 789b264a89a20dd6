import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { planCsv } from '../../core/reconcile/restore-plan.js';
import {
  fromRow,
  type PlanStore,
  type TargetRow,
  toRow,
} from '../../core/reconcile/stored-plan.js';
import { createChunkedItems } from './chunked-items.js';

// Restore plans awaiting a decision, in the reconcile reports table beside the group's reports
// (`sk = plan#<id>`, chunked: a plan of a group on thousands of partitions is megabytes). A plan
// is kept KEEP_DAYS (an approval waits at most a day) and a group keeps at most MAX_PLANS: each
// save removes the group's plans past either bound, so nothing depends on TTL expiry.

const KEEP_DAYS = 30;
const MAX_PLANS = 50;

export function createPlanStore(client: DynamoDBDocumentClient, tableName: string): PlanStore {
  const items = createChunkedItems(client, tableName);
  return {
    async save(planId, plan, digest) {
      const savedAt = Date.now();
      await items.put(
        plan.group,
        `plan#${planId}`,
        { digest, savedAt },
        plan.partitions.map(toRow),
      );
      const newestFirst = (await items.heads(plan.group, 'plan#')).sort(
        (a, b) => b.savedAt - a.savedAt,
      );
      const others = newestFirst.filter(({ sk }) => sk !== `plan#${planId}`);
      for (const [i, { sk, savedAt: at }] of others.entries()) {
        if (i >= MAX_PLANS - 1 || !(at > savedAt - KEEP_DAYS * 86_400_000)) {
          await items.remove(plan.group, sk);
        }
      }
    },

    async load(group, planId) {
      const stored = await items.get(group, `plan#${planId}`);
      if (!stored) return undefined;
      const partitions = (stored.rows as TargetRow[]).map(fromRow);
      return { group, partitions, csv: planCsv(partitions) };
    },
  };
}
