import { describe, expect, it } from 'vitest';
import {
  type SeenInLog,
  type SeqFatePorts,
  SeqFates,
} from '../../../../functions/core/audit/seq-fates.js';
import { type LedgerBlock, MAX_VOID_RANGE_SEQS } from '../../../../functions/core/publish/ports.js';
import type { RecordOutcome } from '../../../../functions/core/shared/outcomes.js';

// The audit's hole finder with fake ports: a counter and a ledger whose VOID range write refuses
// a seq where a block already starts, and ends at a block starting inside it, as the DynamoDB
// adapter's conditional put and its read after do.

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
  const voids: Array<[number, number]> = [];
  const found: number[] = [];
  const starts = new Set(taken);
  const fake: SeqFatePorts = {
    counter: {
      read: async () =>
        lastSeq === 0 ? undefined : { lastSeq, updatedAt, ...(homeTopic && { homeTopic }) },
    },
    ledger: {
      async void(b) {
        expect(b.outcomes.every((o) => o.status === 'VOID')).toBe(true);
        if (starts.has(b.firstSeq)) return 0;
        const last = b.firstSeq + b.outcomes.length - 1;
        let inside: number | undefined;
        for (const start of starts)
          if (start > b.firstSeq && start <= last && (inside === undefined || start < inside))
            inside = start;
        const n = (inside ?? last + 1) - b.firstSeq;
        starts.add(b.firstSeq);
        voids.push([b.firstSeq, b.firstSeq + n - 1]);
        return n;
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
  it('voids every hole up to the counter, one VOID range each, once older than the horizon', async () => {
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
    expect(voids).toEqual([
      [3, 4],
      [6, 8],
    ]);
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
    expect(voids).toEqual([[2, 3]]);
  });

  it('ends a VOID range where a publisher has just written its block, and leaves the rest', async () => {
    const fates = new SeqFates(HORIZON_AT);
    fates.addBlock(block(1, 1));
    const { fake, voids } = ports(6, OLD, [4]);
    expect(await settle(fates, fake)).toMatchObject({ voidedNow: 2, unrecorded: [[4, 6]] });
    expect(voids).toEqual([[2, 3]]);
  });

  it('voids a hole where a publisher has just written at its first seq not at all', async () => {
    const fates = new SeqFates(HORIZON_AT);
    fates.addBlock(block(1, 1));
    const { fake, voids } = ports(6, OLD, [2]);
    expect(await settle(fates, fake)).toMatchObject({ voidedNow: 0, unrecorded: [[2, 6]] });
    expect(voids).toEqual([]);
  });

  it('gives every old hole a fate in one run, whatever the backlog: one write per hole', async () => {
    // 3,000 unused lease rests of 9 seqs between 1-seq blocks: 27,000 seqs, 27 runs of the
    // old one-VOID-per-seq audit at 1,000 a run.
    const fates = new SeqFates(HORIZON_AT);
    for (let i = 0; i < 3000; i++) fates.addBlock(block(10 * i + 1, 1));
    const { fake, voids } = ports(30_000, OLD);
    expect(await settle(fates, fake)).toEqual({
      allocated: 30_000,
      void: 27_000,
      voidedNow: 27_000,
      unrecorded: [],
    });
    expect(voids).toHaveLength(3000);
  });

  it('splits a hole longer than MAX_VOID_RANGE_SEQS into ranges of at most that', async () => {
    const fates = new SeqFates(HORIZON_AT);
    const { fake, voids } = ports(MAX_VOID_RANGE_SEQS * 2 + 5, OLD);
    expect(await settle(fates, fake)).toMatchObject({ voidedNow: MAX_VOID_RANGE_SEQS * 2 + 5 });
    expect(voids).toEqual([
      [1, MAX_VOID_RANGE_SEQS],
      [MAX_VOID_RANGE_SEQS + 1, 2 * MAX_VOID_RANGE_SEQS],
      [2 * MAX_VOID_RANGE_SEQS + 1, 2 * MAX_VOID_RANGE_SEQS + 5],
    ]);
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

  it('writes at most its budget of ranges per run; the next run goes on', async () => {
    const blocks = [2, 4, 6, 8].map((seq) => block(seq, 1));
    const first = new SeqFates(HORIZON_AT, 3);
    for (const b of blocks) first.addBlock(b);
    const { fake, voids } = ports(9, OLD, [2, 4, 6, 8]);
    expect(await settle(first, fake)).toMatchObject({
      voidedNow: 3,
      unrecorded: [
        [7, 7],
        [9, 9],
      ],
    });
    const next = new SeqFates(HORIZON_AT, 3);
    for (const b of blocks) next.addBlock(b);
    for (const [seq] of voids) {
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
    expect(voids).toEqual([
      [2, 2],
      [4, 4],
    ]);
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
    expect(voids).toEqual([[3, 4]]);
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
