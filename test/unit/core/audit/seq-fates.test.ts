import { describe, expect, it } from 'vitest';
import {
  type SeenInLog,
  type SeqFatePorts,
  SeqFates,
} from '../../../../functions/core/audit/seq-fates.js';
import type { LedgerBlock } from '../../../../functions/core/publish/ports.js';
import type { RecordOutcome } from '../../../../functions/core/shared/outcomes.js';

// The audit's hole finder with fake ports: a counter and a ledger whose VOID write refuses a seq
// where a block already starts, as the DynamoDB adapter's conditional put does.

const HORIZON_AT = Date.UTC(2026, 10, 30, 12);
const OLD = HORIZON_AT - 60_000;
const YOUNG = HORIZON_AT + 1000;

const acked: RecordOutcome = { status: 'ACKED', partition: 0, offset: '0' };

function block(firstSeq: number, count: number, writtenAt = OLD, topic = 'orders'): LedgerBlock {
  return {
    stream: 's',
    firstSeq,
    topic,
    session: 'p',
    idempotencyKey: undefined,
    outcomes: Array.from({ length: count }, () => acked),
    writtenAt,
  };
}

function ports(
  lastSeq: number,
  updatedAt: number,
  taken: readonly number[] = [],
  homeTopic?: string,
) {
  const voids: number[] = [];
  const found: number[] = [];
  const starts = new Set(taken);
  const fake: SeqFatePorts = {
    counter: {
      read: async () =>
        lastSeq === 0 ? undefined : { lastSeq, updatedAt, ...(homeTopic && { homeTopic }) },
    },
    ledger: {
      async void(b) {
        expect(b.outcomes).toEqual([{ status: 'VOID', message: expect.any(String) }]);
        if (starts.has(b.firstSeq)) return false;
        starts.add(b.firstSeq);
        voids.push(b.firstSeq);
        return true;
      },
      async fill(b) {
        expect(b.outcomes).toEqual([{ status: 'UNKNOWN', message: expect.any(String) }]);
        if (starts.has(b.firstSeq)) return false;
        starts.add(b.firstSeq);
        found.push(b.firstSeq);
        return true;
      },
    },
  };
  return { fake, voids, found };
}

/** The log as the audit read it: `inLog` seqs seen, `folded` ones it can no longer tell. */
const logOf = (inLog: readonly number[] = [], complete = true, folded = 0): SeenInLog => ({
  complete,
  seen: (_stream, seq) => (seq <= folded ? undefined : inLog.includes(seq)),
});

async function settle(fates: SeqFates, p: SeqFatePorts, log: SeenInLog = logOf()) {
  return (await fates.settle(p, 'orders', ['s'], log)).get('s');
}

describe('SeqFates', () => {
  it('voids every seq up to the counter with no block, one at a time, once older than the horizon', async () => {
    const fates = new SeqFates(HORIZON_AT);
    fates.addBlock(block(1, 2));
    fates.addBlock(block(5, 1));
    const { fake, voids } = ports(8, OLD);
    expect(await settle(fates, fake)).toEqual({
      allocated: 8,
      void: 5,
      voidedNow: 5,
      unrecorded: [],
    });
    expect(voids).toEqual([3, 4, 6, 7, 8]);
  });

  it('leaves holes younger than the horizon unrecorded, except below a block written before it', async () => {
    const fates = new SeqFates(HORIZON_AT);
    fates.addBlock(block(1, 1));
    fates.addBlock(block(4, 1, OLD)); // 2..3 were allocated before 4, so before the horizon
    fates.addBlock(block(6, 1, YOUNG));
    const { fake, voids } = ports(7, YOUNG);
    expect(await settle(fates, fake)).toMatchObject({
      voidedNow: 2,
      unrecorded: [
        [5, 5],
        [7, 7],
      ],
    });
    expect(voids).toEqual([2, 3]);
  });

  it('stops voiding a hole where a publisher has just written its block', async () => {
    const fates = new SeqFates(HORIZON_AT);
    fates.addBlock(block(1, 1));
    const { fake, voids } = ports(6, OLD, [4]);
    expect(await settle(fates, fake)).toMatchObject({ voidedNow: 2, unrecorded: [[4, 6]] });
    expect(voids).toEqual([2, 3]);
  });

  it('counts VOID outcomes already in the ledger and treats blocks of every topic as fates', async () => {
    const fates = new SeqFates(HORIZON_AT);
    fates.addBlock(block(1, 1));
    fates.addBlock({ ...block(2, 2), outcomes: [{ status: 'VOID', message: 'earlier' }, acked] });
    fates.addBlock(block(4, 1, OLD, 'another-topic'));
    const { fake, voids } = ports(4, OLD);
    expect(await settle(fates, fake)).toEqual({
      allocated: 4,
      void: 1,
      voidedNow: 0,
      unrecorded: [],
    });
    expect(voids).toEqual([]);
  });

  it('writes at most its budget of VOIDs per run; the next run goes on', async () => {
    const first = new SeqFates(HORIZON_AT, 3);
    const { fake, voids } = ports(5, OLD);
    expect(await settle(first, fake)).toMatchObject({ voidedNow: 3, unrecorded: [[4, 5]] });
    const next = new SeqFates(HORIZON_AT, 3);
    for (const seq of voids) {
      next.addBlock({ ...block(seq, 1), outcomes: [{ status: 'VOID', message: 'run 1' }] });
    }
    expect(await settle(next, fake)).toMatchObject({ void: 5, voidedNow: 2, unrecorded: [] });
  });

  it('records a hole it finds in the log UNKNOWN (a record sent before any ledger write), not VOID', async () => {
    const fates = new SeqFates(HORIZON_AT);
    fates.addBlock(block(1, 1));
    const { fake, voids, found } = ports(5, OLD, [], 'orders');
    expect(await settle(fates, fake, logOf([3, 5]))).toEqual({
      allocated: 5,
      void: 2,
      voidedNow: 2,
      foundNow: 2,
      unrecorded: [],
    });
    expect(found).toEqual([3, 5]);
    expect(voids).toEqual([2, 4]);
  });

  it('voids nothing it has not seen while the log was not read to its end; found ones it records', async () => {
    const fates = new SeqFates(HORIZON_AT);
    const { fake, voids, found } = ports(3, OLD);
    expect(await settle(fates, fake, logOf([2], false))).toMatchObject({
      voidedNow: 0,
      foundNow: 1,
      unrecorded: [
        [1, 1],
        [3, 3],
      ],
    });
    expect(found).toEqual([2]);
    expect(voids).toEqual([]);
  });

  it('leaves holes below the folded floor alone (it can no longer say whether they landed)', async () => {
    const fates = new SeqFates(HORIZON_AT);
    const { fake, voids } = ports(4, OLD);
    expect(await settle(fates, fake, logOf([], true, 2))).toMatchObject({
      voidedNow: 2,
      unrecorded: [[1, 2]],
    });
    expect(voids).toEqual([3, 4]);
  });

  it("leaves a stream's holes to the audit of its home topic, the one that can find them sent", async () => {
    const fates = new SeqFates(HORIZON_AT);
    const elsewhere = ports(3, OLD, [], 'payments');
    expect(await settle(fates, elsewhere.fake)).toMatchObject({
      voidedNow: 0,
      unrecorded: [[1, 3]],
    });
    expect(elsewhere.voids).toEqual([]);
    const home = ports(3, OLD, [], 'orders');
    expect(await settle(new SeqFates(HORIZON_AT), home.fake)).toMatchObject({ voidedNow: 3 });
  });

  it('reports a stream that never allocated as 0 allocated, nothing to void', async () => {
    const { fake } = ports(0, OLD);
    expect(await settle(new SeqFates(HORIZON_AT), fake)).toEqual({
      allocated: 0,
      void: 0,
      voidedNow: 0,
      unrecorded: [],
    });
  });
});
