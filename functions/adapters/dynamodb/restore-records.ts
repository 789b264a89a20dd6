import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createChunkedItems } from './chunked-items.js';

// Records of executed restores (every offset changed by hand, before and after), in the reconcile
// reports table under `sk = restore#<executedAt>`: the audit trail of offsets changed by hand.
// Restores happen by hand, so a group has few; the newest `kept` per group stay, older ones go
// when the next is saved. Chunked: a restore of thousands of partitions is larger than one
// DynamoDB item holds.

export interface RestoreRecord {
  readonly group: string;
  readonly executedAt: string;
  readonly partitions: readonly object[];
}

export function createRestoreRecords(
  client: DynamoDBDocumentClient,
  tableName: string,
  options: { readonly kept?: number } = {},
) {
  const items = createChunkedItems(client, tableName);
  const kept = options.kept ?? 100;
  return {
    async save(record: RestoreRecord): Promise<void> {
      const { partitions, ...head } = record;
      await items.put(record.group, `restore#${record.executedAt}`, head, partitions);
      // Sort keys are ISO times: oldest first.
      const all = await items.heads(record.group, 'restore#');
      for (const { sk } of all.slice(0, Math.max(0, all.length - kept))) {
        await items.remove(record.group, sk);
      }
    },

    async load(group: string, executedAt: string): Promise<RestoreRecord | undefined> {
      const stored = await items.get(group, `restore#${executedAt}`);
      return stored && { group, executedAt, partitions: stored.rows as object[] };
    },
  };
}
