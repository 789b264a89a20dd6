import { describe, expect, it } from 'vitest';
import { createReceiptsStore } from '../../functions/adapters/dynamodb/receipts-store.js';
import type { ReceiptBatch } from '../../functions/core/receipts/msk-receipts.js';
import { countingClient } from '../helpers/counting-client.js';
import { localTablesForFile } from '../helpers/local-tables.js';

// Issue 31, reads bounded by work: the audit reads the receipts written since its checkpoint
// (the sort key starts with the write time), not every receipt from the start. Items read are
// counted by a wrapper around the real adapter's client, on the local DynamoDB API.

/** Resolves once the clock has moved past `t` (a receipt written then is dated after it). */
async function clockPast(t: number): Promise<void> {
  while (Date.now() <= t) await new Promise((resolve) => setImmediate(resolve));
}

const batch = (seq: number): ReceiptBatch => ({
  group: 'billing',
  stream: 'orders',
  topic: 'orders',
  seqs: [[seq, seq]],
  offsets: [[0, seq, seq]],
  count: 1,
});

describe('receipts read by write time', () => {
  const { documents, table } = localTablesForFile('receipts-since');

  it('hands over only the receipts written after a time, with when each was written', async () => {
    const { client, read } = countingClient(documents);
    const store = createReceiptsStore(client, table('ReceiptsTable'));
    await store.writeAll(Array.from({ length: 60 }, (_, i) => batch(i + 1)));
    const checkpoint = Date.now();
    await clockPast(checkpoint);
    await store.writeAll([batch(61), batch(62)]);
    await store.writeAll([batch(63)]);

    read.items = 0;
    const since: Array<[number, number]> = [];
    await store.forEachBatchSince('billing', 'orders', checkpoint, (b, receivedAt) =>
      since.push([b.seqs[0]?.[0] ?? 0, receivedAt]),
    );
    // Handed over in write-time order; receipts written in the same millisecond have no order
    // among themselves (the sort key's tail is random), so the seqs are compared as a set.
    expect(since.map(([seq]) => seq).sort((a, b) => a - b)).toEqual([61, 62, 63]);
    expect(since.every(([, at], i) => i === 0 || at >= (since[i - 1]?.[1] ?? 0))).toBe(true);
    expect(since.every(([, at]) => at > checkpoint && at <= Date.now())).toBe(true);
    // The 60 older receipts are not read at all; the whole partition is 63.
    expect(read.items).toBe(3);
    read.items = 0;
    await store.forEachBatchSince('billing', 'orders', undefined, () => {});
    expect(read.items).toBe(63);
  });
});
