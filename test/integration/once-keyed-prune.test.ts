import {
  CreateTableCommand,
  DeleteTableCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createOnceStore } from '../../functions/adapters/dynamodb/once-store.js';
import { type OnceRecord, runOnce } from '../../functions/core/once/run-once.js';
import { countingClient } from '../helpers/counting-client.js';
import { localTablesForFile } from '../helpers/local-tables.js';

// Issue 31, reads bounded by work: marks of caller-derived keys (no seq to fold into ranges)
// are deleted once past the once guard's horizon, reading only those (the byPruneAt index), so
// a group's keyed marks stay within the horizon's worth, however many months it runs. Months of
// daily batches on an injected clock, through the real store on the local DynamoDB API.

const DAY = 86_400_000;
const HORIZON_DAYS = 30;
const PER_DAY = 4;
const T0 = Date.parse('2026-01-01T00:00:00Z');

const keyed = (key: string, i: number): OnceRecord => ({
  id: `orders-0-${i}`,
  lane: 'orders-0',
  identity: { key },
});

describe('keyed once-marks past the horizon (dynalite)', () => {
  const { client, documents, table } = localTablesForFile('once-keyed');

  it(`keeps at most ${HORIZON_DAYS + 1} days of keyed marks over 60 days, reading only the marks it deletes`, async () => {
    const { client: counted, read } = countingClient(documents);
    const store = createOnceStore(counted, table('OnceTable'));
    const clock = { t: T0 };
    const compacted = new Map<string, number>(); // one container's, across its invocations
    let n = 0;
    const options = {
      group: 'billing',
      store,
      now: () => clock.t,
      newToken: () => `token-${++n}`,
      claimMs: 60_000,
      horizonMs: HORIZON_DAYS * DAY,
      compacted,
    };
    const keptMarks = async () =>
      (
        await documents.send(
          new QueryCommand({
            TableName: table('OnceTable'),
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': 'billing#\u0000key' },
            ConsistentRead: true,
          }),
        )
      ).Items?.length ?? 0;
    let most = 0;
    let readForPruning = 0;
    let prunedTotal = 0;
    let before = 0;
    for (let day = 0; day < 60; day++) {
      clock.t = T0 + day * DAY;
      const batch = Array.from({ length: PER_DAY }, (_, i) => keyed(`order-${day}-${i}`, i));
      // Redelivered: one from 10 days ago (within the horizon: suppressed), one from 40 days
      // ago (past it: acted on again, as the horizon says).
      if (day >= 10) batch.push(keyed(`order-${day - 10}-0`, PER_DAY));
      if (day >= 40) batch.push(keyed(`order-${day - 40}-1`, PER_DAY + 1));
      read.items = 0;
      const outcome = await runOnce(batch, async () => {}, options);
      readForPruning += read.items; // runOnce reads nothing else by Query or Scan
      expect(outcome.failed).toEqual([]);
      expect(outcome.suppressed.map((r) => r.id)).toEqual(day >= 10 ? [`orders-0-${PER_DAY}`] : []);
      expect(outcome.acted).toHaveLength(PER_DAY + (day >= 40 ? 1 : 0));
      const after = await keptMarks();
      prunedTotal += before + outcome.acted.length - after;
      most = Math.max(most, after);
      before = after;
    }
    // The bound: a mark is kept until its done time is past the horizon, so at most the marks
    // of the last HORIZON_DAYS + 1 days (each day's PER_DAY, plus the one acted on again).
    expect(most).toBeLessThanOrEqual((HORIZON_DAYS + 1) * (PER_DAY + 1));
    expect(await keptMarks()).toBeLessThanOrEqual((HORIZON_DAYS + 1) * (PER_DAY + 1));
    // Every item the pruning read was one it deleted: its reads grow with the work, not the table.
    expect(prunedTotal).toBeGreaterThan(25 * PER_DAY);
    expect(readForPruning).toBe(prunedTotal);
  });

  it('keeps the keyed marks of a table created without the index, and acts as before', async () => {
    const TableName = `${table('OnceTable')}-no-index`;
    await client.send(
      new CreateTableCommand({
        TableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
      }),
    );
    try {
      await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName });
      const store = createOnceStore(documents, TableName);
      const at = { group: 'billing', key: 'order-1' };
      expect(await store.claim(at, { token: 't', lane: 'orders-0', expiresAt: 2, now: 1 })).toBe(
        'claimed',
      );
      expect(await store.finish(at, 't', 1)).toBe(true);
      expect(await store.pruneKeyed?.('billing', Number.MAX_SAFE_INTEGER, 10)).toBe(0);
      expect(await store.claim(at, { token: 'u', lane: 'orders-0', expiresAt: 9, now: 8 })).toBe(
        'done',
      );
    } finally {
      await client.send(new DeleteTableCommand({ TableName }));
    }
  });
});
