import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createChunkedItems } from './chunked-items.js';

// Records of executed restores (every offset changed by hand, before and after), in the reconcile
// reports table under `sk = restore#<executedAt>`, kept (no expiry): they are the audit trail.
// Chunked: a restore of thousands of partitions is larger than one DynamoDB item holds.

export interface RestoreRecord {
  readonly group: string;
  readonly executedAt: string;
  readonly partitions: readonly object[];
}

export function createRestoreRecords(client: DynamoDBDocumentClient, tableName: string) {
  const items = createChunkedItems(client, tableName);
  return {
    async save(record: RestoreRecord): Promise<void> {
      const { partitions, ...head } = record;
      await items.put(record.group, `restore#${record.executedAt}`, head, partitions);
    },

    async load(group: string, executedAt: string): Promise<RestoreRecord | undefined> {
      const stored = await items.get(group, `restore#${executedAt}`);
      return stored && { group, executedAt, partitions: stored.rows as object[] };
    },
  };
}

export type RestoreRecords = ReturnType<typeof createRestoreRecords>;
