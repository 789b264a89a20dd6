import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AuditPorts,
  type AuditReport,
  createAuditor,
  type ScannedRecord,
} from '../../functions/core/audit.js';
import type { CheckpointJson } from '../../functions/core/audit-state.js';
import type { RecordOutcome } from '../../functions/core/outcomes.js';
import type { LedgerBlock } from '../../functions/core/publish-ports.js';
import type { SeqRange } from '../../functions/core/seq-ranges.js';

// An audit that reads only the ledger blocks written since its last run must find what one
// reading the whole ledger finds, run after run: two worlds get the same publishes, rewrites,
// holes, duplicates and receipts; one auditor's ledger lists changed blocks, the other's does not.

const T0 = Date.UTC(2026, 10, 1);
const MINUTE = 60_000;
const TOPIC = 'orders';
const STREAMS = ['orders', 'refunds'];
const GROUP = 'billing';

type Fate = 'ACKED' | 'UNKNOWN_LANDED' | 'UNKNOWN_ABSENT' | 'NOT_SENT' | 'LOST';

type Op =
  | { kind: 'publish'; stream: number; fates: Fate[]; topic: 'orders' | 'other' }
  | { kind: 'hole'; stream: number; size: number }
  | { kind: 'rewrite'; stream: number; pick: number; to: 'ACKED' | 'NOT_SENT' | 'UNKNOWN' }
  | { kind: 'duplicate'; stream: number; pick: number }
  | { kind: 'receive'; stream: number; pick: number; size: number }
  | { kind: 'wait'; minutes: number }
  | { kind: 'audit' };

/** One world: a ledger, a log of one partition, receipts, a counter, a checkpoint. */
class World {
  now = T0;
  readonly blocks = new Map<string, Map<number, LedgerBlock>>();
  readonly log: ScannedRecord[] = [];
  readonly receipts = new Map<string, SeqRange[]>();
  readonly counters = new Map<string, { lastSeq: number; updatedAt: number }>();
  checkpoint: { state: CheckpointJson; version: number } | undefined;
  /** Blocks handed over by the audit's ledger reads, and how many reads. */
  blocksRead = 0;
  fullReads = 0;

  constructor(readonly incremental: boolean) {}

  #put(block: LedgerBlock): void {
    const blocks = this.blocks.get(block.stream) ?? new Map<number, LedgerBlock>();
    this.blocks.set(block.stream, blocks);
    blocks.set(block.firstSeq, { ...block, writtenAt: this.now });
  }

  #sorted(stream: string): LedgerBlock[] {
    return [...(this.blocks.get(stream)?.values() ?? [])].sort((a, b) => a.firstSeq - b.firstSeq);
  }

  pick(stream: string, pick: number): LedgerBlock | undefined {
    const all = this.#sorted(stream);
    return all.length === 0 ? undefined : all[pick % all.length];
  }

  append(stream: string, seq: number, session: string): number {
    const offset = this.log.length;
    this.log.push({
      partition: 0,
      offset,
      timestamp: this.now,
      headers: { 'tally.stream': stream, 'tally.seq': String(seq), 'tally.session': session },
    });
    return offset;
  }

  allocate(stream: string, n: number): number {
    const counter = this.counters.get(stream) ?? { lastSeq: 0, updatedAt: 0 };
    this.counters.set(stream, { lastSeq: counter.lastSeq + n, updatedAt: this.now });
    return counter.lastSeq + 1;
  }

  apply(op: Op): void {
    const stream = 'stream' in op ? (STREAMS[op.stream % STREAMS.length] as string) : '';
    switch (op.kind) {
      case 'publish': {
        const firstSeq = this.allocate(stream, op.fates.length);
        const outcomes = op.fates.map((fate, i): RecordOutcome => {
          const seq = firstSeq + i;
          if (fate === 'NOT_SENT') return { status: 'NOT_SENT', message: 'deadline' };
          if (fate === 'UNKNOWN_ABSENT') return { status: 'UNKNOWN', message: 'timeout' };
          if (fate === 'LOST') return { status: 'ACKED', partition: 0, offset: '99999' };
          const offset = op.topic === TOPIC ? this.append(stream, seq, 'p1') : 0;
          return fate === 'ACKED'
            ? { status: 'ACKED', partition: 0, offset: String(offset) }
            : { status: 'UNKNOWN', message: 'timeout' };
        });
        const block = { stream, firstSeq, topic: op.topic, session: 'p1', outcomes };
        this.#put({ ...block, idempotencyKey: undefined });
        return;
      }
      case 'hole':
        this.allocate(stream, op.size);
        return;
      case 'rewrite': {
        // A retry or a late answer rewrites the block (its write time too, as updatedAt does).
        const block = this.pick(stream, op.pick);
        if (block === undefined || block.outcomes.every((o) => o.status === 'VOID')) return;
        const outcomes = block.outcomes.map((o, i): RecordOutcome => {
          if (o.status !== 'UNKNOWN' || i % 2 === 1) return o;
          if (op.to === 'ACKED') return { status: 'ACKED', partition: 0, offset: '0' };
          if (op.to === 'NOT_SENT') return { status: 'NOT_SENT', message: 'late answer' };
          return o;
        });
        this.#put({ ...block, outcomes });
        return;
      }
      case 'duplicate': {
        const block = this.pick(stream, op.pick);
        if (block?.topic === TOPIC) this.append(stream, block.firstSeq, 'p2');
        return;
      }
      case 'receive': {
        const block = this.pick(stream, op.pick);
        if (block === undefined) return;
        const runs = this.receipts.get(stream) ?? [];
        runs.push([block.firstSeq, block.firstSeq + op.size - 1]);
        this.receipts.set(stream, runs);
        return;
      }
      case 'wait':
        this.now += op.minutes * MINUTE;
        return;
      case 'audit':
        return;
    }
  }

  ports(): AuditPorts {
    const ledger: AuditPorts['ledger'] = {
      forEachBlock: async (stream, onBlock) => {
        this.fullReads++;
        for (const block of this.#sorted(stream)) {
          this.blocksRead++;
          onBlock(block);
        }
      },
      find: async (stream, seq) =>
        this.#sorted(stream).find((b) => seq >= b.firstSeq && seq < b.firstSeq + b.outcomes.length),
      write: async (block) => {
        this.#put(block);
        return String(this.now); // no publisher writes during a run here: every settling lands
      },
    };
    if (this.incremental)
      ledger.forEachChangedBlock = async (stream, since, onBlock) => {
        for (const block of this.#sorted(stream).reverse()) {
          if ((block.writtenAt ?? 0) < since) continue;
          this.blocksRead++;
          onBlock(block);
        }
      };
    return {
      clock: () => this.now,
      ledger,
      log: {
        scan: async (_topic, request, onRecord) => {
          const from = request.from?.get(0) ?? 0;
          const until = request.until === undefined ? this.log.length : request.until.get(0);
          if (until === undefined)
            return { scanned: 0, next: new Map(), logStart: new Map(), complete: true };
          for (const record of this.log.slice(from, until)) onRecord(record);
          return {
            scanned: Math.max(0, until - from),
            next: new Map([[0, Math.max(from, until)]]),
            logStart: new Map([[0, 0]]),
            complete: true,
          };
        },
      },
      receipts: {
        forEachBatch: async (group, stream, onBatch) => {
          if (group !== GROUP) return;
          for (const run of this.receipts.get(stream) ?? []) onBatch({ seqs: [run] });
        },
        counts: async () => [],
      },
      checkpoints: {
        load: async () => this.checkpoint && structuredClone(this.checkpoint),
        save: async (_topic, state, version) => {
          expect(this.checkpoint?.version ?? 0).toBe(version);
          this.checkpoint = { state: JSON.parse(JSON.stringify(state)), version: version + 1 };
        },
      },
      seqFates: {
        counter: { read: async (stream) => this.counters.get(stream) },
        ledger: {
          void: async (block) => {
            if (this.blocks.get(block.stream)?.has(block.firstSeq)) return false;
            this.#put(block);
            return true;
          },
          fill: async (block) => {
            if (this.blocks.get(block.stream)?.has(block.firstSeq)) return false;
            this.#put(block);
            return true;
          },
        },
      },
    };
  }

  async audit(): Promise<AuditReport> {
    const report = await createAuditor(this.ports()).run({
      topic: TOPIC,
      groups: [GROUP],
      streams: STREAMS,
      scanDeadlineAt: this.now + MINUTE,
      horizonMs: 10 * MINUTE,
      bucketMs: 5 * MINUTE,
      retentionMs: 60 * MINUTE,
      ledgerLagMs: MINUTE,
    });
    const { timingsMs: _, ...rest } = report;
    return rest;
  }
}

const fateArb = fc.constantFrom<Fate>(
  'ACKED',
  'ACKED',
  'ACKED',
  'UNKNOWN_LANDED',
  'UNKNOWN_ABSENT',
  'NOT_SENT',
  'LOST',
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('publish' as const),
      stream: fc.nat(1),
      fates: fc.array(fateArb, { minLength: 1, maxLength: 6 }),
      topic: fc.constantFrom<'orders' | 'other'>('orders', 'orders', 'orders', 'other'),
    }),
  },
  fc.record({
    kind: fc.constant('hole' as const),
    stream: fc.nat(1),
    size: fc.integer({ min: 1, max: 3 }),
  }),
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('rewrite' as const),
      stream: fc.nat(1),
      pick: fc.nat(50),
      to: fc.constantFrom<'ACKED' | 'NOT_SENT' | 'UNKNOWN'>('ACKED', 'NOT_SENT', 'UNKNOWN'),
    }),
  },
  fc.record({ kind: fc.constant('duplicate' as const), stream: fc.nat(1), pick: fc.nat(50) }),
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('receive' as const),
      stream: fc.nat(1),
      pick: fc.nat(50),
      size: fc.integer({ min: 1, max: 4 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('wait' as const),
      minutes: fc.integer({ min: 1, max: 40 }),
    }),
  },
  { weight: 3, arbitrary: fc.constant({ kind: 'audit' as const }) },
);

describe('an incremental audit', () => {
  it('finds what a full re-read of the ledger finds, over random publishes and rewrites', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 60 }), async (ops) => {
        const full = new World(false);
        const incremental = new World(true);
        for (const op of [
          ...ops,
          { kind: 'wait', minutes: 2 } as const,
          { kind: 'audit' } as const,
        ]) {
          full.apply(op);
          incremental.apply(op);
          if (op.kind !== 'audit') continue;
          expect(await incremental.audit()).toEqual(await full.audit());
        }
      }),
      { numRuns: 150 },
    );
  });

  it('reads only the blocks written since its last run (less the lag), and none when nothing changed', async () => {
    const world = new World(true);
    for (let i = 0; i < 200; i++)
      world.apply({ kind: 'publish', stream: 0, fates: ['ACKED'], topic: TOPIC });
    world.apply({ kind: 'wait', minutes: 5 });
    await world.audit();
    expect([world.fullReads, world.blocksRead]).toEqual([2, 200]); // first run: the whole ledger
    world.apply({ kind: 'wait', minutes: 15 });
    world.blocksRead = 0;
    await world.audit();
    expect([world.fullReads, world.blocksRead]).toEqual([2, 0]);
    world.apply({ kind: 'publish', stream: 0, fates: ['ACKED', 'UNKNOWN_LANDED'], topic: TOPIC });
    world.apply({ kind: 'rewrite', stream: 0, pick: 7, to: 'ACKED' });
    world.apply({ kind: 'wait', minutes: 15 });
    const report = await world.audit();
    expect(world.blocksRead).toBe(2); // the new block and the rewritten one
    expect(report.settled).toEqual({ landed: 1, notWritten: 0 });
  });
});
