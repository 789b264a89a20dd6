import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createChunkedItems } from './chunked-items.js';

// The groups of a reconcile-now answer longer than one page, kept so its `next` pages read that
// run (functions/reconcile/http-handler.ts), in the reconcile reports table under one partition
// key of their own, sort keys `run#<id>`, chunked (a real group of that name cannot collide:
// its sort keys never start with `run#`). Each save removes the runs older than KEEP_MS or past MAX_RUNS: nothing
// depends on TTL expiry.

const RUNS = '~reconcile-runs';
/** A run's pages are read for a day after it. */
export const RUN_PAGES_KEEP_MS = 86_400_000;
const MAX_RUNS = 20;

export function createRunPages(client: DynamoDBDocumentClient, tableName: string) {
  const items = createChunkedItems(client, tableName);
  return {
    /** Keeps `rows` (a run's groups) under a new id, which it returns. */
    async save(rows: readonly object[], now = Date.now()): Promise<string> {
      const id = randomUUID();
      await items.put(RUNS, `run#${id}`, { savedAt: now }, rows);
      const heads = await items.heads(RUNS, 'run#');
      const oldestFirst = heads
        .filter((h) => h.sk !== `run#${id}`)
        .sort((a, b) => a.savedAt - b.savedAt);
      const past = oldestFirst.length - (MAX_RUNS - 1);
      for (const [i, head] of oldestFirst.entries()) {
        if (i < past || !(head.savedAt > now - RUN_PAGES_KEEP_MS))
          await items.remove(RUNS, head.sk);
      }
      return id;
    },
    /** The groups of run `id`, or undefined when it is not kept (any more). */
    async load(id: string, now = Date.now()): Promise<object[] | undefined> {
      const stored = await items.get(RUNS, `run#${id}`);
      if (!stored || !(Number(stored.head.savedAt) > now - RUN_PAGES_KEEP_MS)) return undefined;
      return stored.rows as object[];
    },
  };
}
