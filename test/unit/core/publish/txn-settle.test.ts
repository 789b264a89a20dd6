import { describe, expect, it } from 'vitest';
import type { LedgerBlock, TxnMark, TxnSettler } from '../../../../functions/core/publish/ports.js';
import {
  fenceDecision,
  settleObserved,
  settleTxnBlock,
  TXN_ABORT_SCAN_MS,
} from '../../../../functions/core/publish/txn-settle.js';
import { Deadline } from '../../../../functions/core/shared/deadline.js';
import { DependencyUnavailableError } from '../../../../functions/core/shared/errors.js';

// When the lookup and the audit may fence a transactional id (docs/transactions.md), and how the
// settling's conditional write treats a writer that got there first. Fakes for the ledger and
// Kafka; the real ones in test/integration/txn-lookup-settle.test.ts.

const TIMEOUT = 60_000;
const SKEW = 2000;
const writtenAt = 1_000_000;

function block(state: TxnMark['state'], generation = 3): LedgerBlock & { txn: TxnMark } {
  return {
    stream: 's',
    firstSeq: 1,
    topic: 't',
    session: `id-0#${generation}`,
    idempotencyKey: undefined,
    outcomes: [{ status: 'UNKNOWN', message: 'prepared' }],
    writtenAt,
    version: 'v1',
    txn: {
      txnId: 'id-0',
      generation,
      state,
      ...(state === 'PREPARED' && { offsets: [{ seq: 1, partition: 0, offset: '7' }] }),
    },
  };
}

describe('fenceDecision', () => {
  const soon = writtenAt + 1000;
  it('never fences a live lease at the recorded generation: PREPARED is read, SENDING waits', () => {
    const live = { generation: 3, leaseUntil: soon + 60_000 };
    expect(fenceDecision(block('PREPARED'), live, soon, TIMEOUT, SKEW)).toBe('read');
    expect(fenceDecision(block('SENDING'), live, soon, TIMEOUT, SKEW)).toBe('wait');
  });
  it('never fences an id taken over since (its new holder initialised it)', () => {
    const taken = { generation: 4, leaseUntil: soon + 60_000 };
    expect(fenceDecision(block('PREPARED'), taken, soon, TIMEOUT, SKEW)).toBe('read');
    expect(fenceDecision(block('SENDING'), taken, soon, TIMEOUT, SKEW)).toBe('read');
  });
  it('fences an id whose recorded lease expired untaken, or that the pool does not hold', () => {
    const lapsed = { generation: 3, leaseUntil: soon - SKEW - 1 };
    expect(fenceDecision(block('PREPARED'), lapsed, soon, TIMEOUT, SKEW)).toBe('fence');
    expect(fenceDecision(block('SENDING'), undefined, soon, TIMEOUT, SKEW)).toBe('fence');
  });
  it('only reads past the transaction timeout and the abort scan, whatever the lease', () => {
    const past = writtenAt + TIMEOUT + TXN_ABORT_SCAN_MS + SKEW;
    for (const lease of [undefined, { generation: 3, leaseUntil: past + 60_000 }]) {
      expect(fenceDecision(block('SENDING'), lease, past, TIMEOUT, SKEW)).toBe('read');
      expect(fenceDecision(block('PREPARED'), lease, past, TIMEOUT, SKEW)).toBe('read');
    }
  });
});

function fakes(fate: 'COMMITTED' | 'NOT_COMMITTED' | Error, writes: Array<string | undefined>) {
  const calls: Array<{ fence: boolean | undefined }> = [];
  const written: LedgerBlock[] = [];
  const transactions: TxnSettler = {
    async settle(_topic, _mark, _expected, _deadline, options) {
      calls.push({ fence: options?.fence });
      if (fate instanceof Error) throw fate;
      return fate;
    },
  };
  const ledger = {
    async write(b: LedgerBlock) {
      written.push(b);
      return writes.shift();
    },
    async find(): Promise<LedgerBlock> {
      const txn: TxnMark = { txnId: 'id-0', generation: 3, state: 'COMMITTED' };
      return { ...block('PREPARED'), txn };
    },
  };
  return { calls, written, ports: { transactions, ledger } };
}
const observe = (now: number) => ({
  now,
  deadline: new Deadline(Date.now() + 5000),
  transactionTimeoutMs: TIMEOUT,
  skewMs: SKEW,
});

describe('settleObserved', () => {
  it('reads without a fence under a live lease and writes ACKED at the recorded offset', async () => {
    const { calls, written, ports } = fakes('COMMITTED', ['v2']);
    const live = async () => ({ generation: 3, leaseUntil: writtenAt + 120_000 });
    const done = await settleObserved(
      { ...ports, leaseOf: live },
      block('PREPARED'),
      observe(writtenAt + 1000),
    );
    expect(calls).toEqual([{ fence: false }]);
    expect(done.kind).toBe('settled');
    expect(written[0]?.outcomes).toEqual([{ status: 'ACKED', partition: 0, offset: '7' }]);
    expect(written[0]?.txn?.state).toBe('COMMITTED');
  });
  it('answers open, with when it is definite, when the read does not finish', async () => {
    const { written, ports } = fakes(new DependencyUnavailableError('read timed out'), []);
    const live = async () => ({ generation: 3, leaseUntil: writtenAt + 120_000 });
    const done = await settleObserved(
      { ...ports, leaseOf: live },
      block('PREPARED'),
      observe(writtenAt + 1000),
    );
    expect(done).toMatchObject({
      kind: 'open',
      definiteBy: writtenAt + TIMEOUT + TXN_ABORT_SCAN_MS,
    });
    expect(written).toEqual([]);
  });
  it('hands back what another writer wrote first (the conditional write refused)', async () => {
    const { ports } = fakes('NOT_COMMITTED', [undefined]);
    const done = await settleObserved(
      { ...ports, leaseOf: async () => undefined },
      block('PREPARED'),
      observe(writtenAt + 1000),
    );
    expect(done.kind).toBe('changed');
  });
});

describe('settleTxnBlock (the keyed retry)', () => {
  it('always fences, and goes on with a block a lookup settled first', async () => {
    const { calls, ports } = fakes('NOT_COMMITTED', [undefined]);
    const settled = await settleTxnBlock(ports, block('PREPARED'), new Deadline(Date.now() + 5000));
    expect(calls).toEqual([{ fence: true }]);
    expect(settled.txn?.state).toBe('COMMITTED');
  });
});
