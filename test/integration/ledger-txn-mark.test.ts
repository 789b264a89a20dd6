import { describe, expect, it } from 'vitest';
import { createLedger } from '../../functions/adapters/dynamodb/ledger.js';
import type { LedgerBlock, TxnMark } from '../../functions/core/publish/ports.js';
import { localTablesForFile } from '../helpers/local-tables.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 33: a transactional block's PREPARED mark holds every record's seq, partition and offset.
// At the largest request (TALLY_MAX_BATCH_ENTRIES, 10,000 records) over many partitions, the
// mark's text alone is over DynamoDB's 400 KB item (which the local API enforces, as
// dynamodb-item-size.test.ts shows): it is stored gzipped and read back whole.
const { documents, table } = localTablesForFile('ledger-txn-mark');

describe('ledger: a transactional mark at the largest request', () => {
  it('writes and reads back a PREPARED mark of 10,000 records over 64 partitions', async () => {
    const ledger = createLedger(documents, table('LedgerTable'));
    const stream = uniqueName('txn-mark');
    const count = 10_000;
    const mark: TxnMark = {
      txnId: 'tally-publish-17',
      generation: 3,
      state: 'PREPARED',
      offsets: Array.from({ length: count }, (_, i) => ({
        seq: 1_000_000_000 + i,
        partition: i % 64,
        offset: String(9_000_000_000_000 + Math.floor(i / 64)),
      })),
    };
    expect(JSON.stringify(mark).length).toBeGreaterThan(409_600);
    const block: LedgerBlock = {
      stream,
      firstSeq: 1_000_000_000,
      topic: 'orders',
      session: 'tally-publish-17#3',
      idempotencyKey: 'k',
      outcomes: Array.from({ length: count }, () => ({
        status: 'UNKNOWN' as const,
        message:
          'prepared in transaction tally-publish-17#3: committed at its offset unless the transaction was aborted',
      })),
      txn: mark,
    };
    const version = await ledger.write(block, undefined, 'absent');
    expect(version).toBeDefined();
    const found = await ledger.find(stream, 1_000_000_000 + 9_999);
    expect(found?.txn).toEqual(mark);
    expect(found?.outcomes).toHaveLength(count);
    // Settled, the mark is small again and stored as text.
    const settled = await ledger.write(
      { ...block, txn: { txnId: mark.txnId, generation: 3, state: 'COMMITTED' } },
      undefined,
      version,
    );
    expect(settled).toBeDefined();
    expect((await ledger.find(stream, 1_000_000_000))?.txn).toEqual({
      txnId: mark.txnId,
      generation: 3,
      state: 'COMMITTED',
    });
  });
});
