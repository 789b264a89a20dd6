import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AuditPorts,
  type AuditReport,
  createAuditor,
  type ScannedRecord,
} from '../../functions/core/audit.js';
import {
  partitionGroups,
  type SliceJson,
  type SlicePorts,
} from '../../functions/core/audit-merge.js';
import { scanSlice } from '../../functions/core/audit-slice.js';
import type { CheckpointJson } from '../../functions/core/audit-state.js';
import type { RecordOutcome } from '../../functions/core/outcomes.js';
import type { LedgerBlock } from '../../functions/core/publish-ports.js';
import type { SeqRange } from '../../functions/core/seq-ranges.js';

// A fan-out audit (children reading groups of partitions into slices, one merge) must report what
// one sequential audit of the whole topic reports, run after run: two worlds get the same
// publishes (a stream's records spread over every partition), cross-partition duplicates,
// UNKNOWN outcomes, losses and receipts; one is audited sequentially, the other by fan-out.

const T0 = Date.UTC(2026, 10, 1);
const MINUTE = 60_000;
const TOPIC = 'orders';
const STREAMS = ['orders', 'refunds'];
const GROUP = 'billing';
const PARTITIONS = 6;

type Fate = 'ACKED' | 'UNKNOWN_LANDED' | 'UNKNOWN_ABSENT' | 'NOT_SENT' | 'LOST';
type Op =
  | { kind: 'publish'; stream: number; fates: Fate[] }
  | { kind: 'duplicate'; stream: number; pick: number; partition: number }
  | { kind: 'receive'; stream: number; pick: number; size: number }
  | { kind: 'untracked'; partition: number }
  | { kind: 'wait'; minutes: number }
  | { kind: 'audit' };

class World {
  now = T0;
  readonly blocks = new Map<string, Map<number, LedgerBlock>>();
  readonly partitions: ScannedRecord[][] = Array.from({ length: PARTITIONS }, () => []);
  readonly receipts = new Map<string, SeqRange[]>();
  readonly counters = new Map<string, { lastSeq: number; updatedAt: number }>();
  checkpoint: { state: CheckpointJson; version: number } | undefined;
  readonly slices = new Map<string, { state: SliceJson; version: number }>();
  /** Slice → the reads still allowed before its deadline (undefined: no limit). */
  readonly budgets = new Map<string, number>();
  #turn = 0;

  #put(block: LedgerBlock): void {
    const blocks = this.blocks.get(block.stream) ?? new Map<number, LedgerBlock>();
    this.blocks.set(block.stream, blocks);
    blocks.set(block.firstSeq, { ...block, writtenAt: this.now });
  }

  #sorted(stream: string): LedgerBlock[] {
    return [...(this.blocks.get(stream)?.values() ?? [])].sort((a, b) => a.firstSeq - b.firstSeq);
  }

  append(partition: number, headers: ScannedRecord['headers']): number {
    const log = this.partitions[partition] as ScannedRecord[];
    log.push({ partition, offset: log.length, timestamp: this.now, headers });
    return log.length - 1;
  }

  apply(op: Op): void {
    const stream = 'stream' in op ? (STREAMS[op.stream % STREAMS.length] as string) : '';
    const pick = (n: number) => {
      const all = this.#sorted(stream);
      return all.length === 0 ? undefined : all[n % all.length];
    };
    switch (op.kind) {
      case 'publish': {
        const counter = this.counters.get(stream) ?? { lastSeq: 0, updatedAt: 0 };
        const firstSeq = counter.lastSeq + 1;
        this.counters.set(stream, {
          lastSeq: counter.lastSeq + op.fates.length,
          updatedAt: this.now,
        });
        const outcomes = op.fates.map((fate, i): RecordOutcome => {
          const seq = firstSeq + i;
          // Records of one stream land on every partition, as keyed records do.
          const partition = this.#turn++ % PARTITIONS;
          if (fate === 'NOT_SENT') return { status: 'NOT_SENT', message: 'deadline' };
          if (fate === 'UNKNOWN_ABSENT') return { status: 'UNKNOWN', message: 'timeout' };
          if (fate === 'LOST') return { status: 'ACKED', partition, offset: '99999' };
          const headers = {
            'tally.stream': stream,
            'tally.seq': String(seq),
            'tally.session': 'p1',
          };
          const offset = this.append(partition, headers);
          return fate === 'ACKED'
            ? { status: 'ACKED', partition, offset: String(offset) }
            : { status: 'UNKNOWN', message: 'timeout' };
        });
        this.#put({
          stream,
          firstSeq,
          topic: TOPIC,
          session: 'p1',
          idempotencyKey: undefined,
          outcomes,
        });
        return;
      }
      case 'duplicate': {
        const block = pick(op.pick);
        if (block === undefined) return;
        const headers = {
          'tally.stream': stream,
          'tally.seq': String(block.firstSeq),
          'tally.session': 'p2',
        };
        this.append(op.partition % PARTITIONS, headers);
        return;
      }
      case 'receive': {
        const block = pick(op.pick);
        if (block === undefined) return;
        const runs = this.receipts.get(stream) ?? [];
        runs.push([block.firstSeq, block.firstSeq + op.size - 1]);
        this.receipts.set(stream, runs);
        return;
      }
      case 'untracked':
        this.append(op.partition % PARTITIONS, {});
        return;
      case 'wait':
        this.now += op.minutes * MINUTE;
        return;
      case 'audit':
        return;
    }
  }

  ports(): AuditPorts & { slices: SlicePorts } {
    return {
      clock: () => this.now,
      ledger: {
        forEachBlock: async (stream, onBlock) => {
          for (const block of this.#sorted(stream)) onBlock(block);
        },
        find: async (stream, seq) =>
          this.#sorted(stream).find(
            (b) => seq >= b.firstSeq && seq < b.firstSeq + b.outcomes.length,
          ),
        write: async (block) => {
          this.#put(block);
          return String(this.now);
        },
      },
      log: {
        scan: async (_topic, request, onRecord) => {
          const next = new Map<number, number>();
          const logStart = new Map<number, number>();
          let scanned = 0;
          let complete = true;
          // The slice whose deadline this is, when a test cut it short.
          const budgetOf = [...this.budgets].find(([slice]) => {
            const [first] = slice.split('-').map(Number);
            return request.until?.has(first as number);
          });
          let budget = budgetOf?.[1] ?? Number.POSITIVE_INFINITY;
          this.partitions.forEach((log, partition) => {
            const until = request.until ? request.until.get(partition) : log.length;
            if (until === undefined) return;
            logStart.set(partition, 0);
            const from = request.from?.get(partition) ?? 0;
            let at = from;
            for (; at < Math.min(until, log.length); at++) {
              if (budget-- <= 0) {
                complete = false;
                break;
              }
              onRecord(log[at] as ScannedRecord);
              scanned++;
            }
            next.set(partition, at);
          });
          if (budgetOf) this.budgets.delete(budgetOf[0]);
          return { scanned, next, logStart, complete };
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
      slices: {
        load: async (_topic, slice) => {
          const saved = this.slices.get(slice);
          return saved && structuredClone(saved);
        },
        save: async (_topic, slice, state, version) => {
          expect(this.slices.get(slice)?.version ?? 0).toBe(version);
          this.slices.set(slice, {
            state: JSON.parse(JSON.stringify(state)),
            version: version + 1,
          });
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

  request(fanOut?: readonly string[]) {
    return {
      topic: TOPIC,
      groups: [GROUP],
      streams: STREAMS,
      scanDeadlineAt: this.now + MINUTE,
      horizonMs: 10 * MINUTE,
      bucketMs: 5 * MINUTE,
      retentionMs: 60 * MINUTE,
      ...(fanOut && { fanOut: { slices: fanOut } }),
    };
  }

  async audit(): Promise<AuditReport> {
    return comparable(await createAuditor(this.ports()).run(this.request()));
  }

  /** The children (of at most `perChild` partitions each), then the merge. */
  async fanOut(perChild: number, options: { merge?: boolean } = {}): Promise<AuditReport> {
    const groups = partitionGroups(PARTITIONS, perChild);
    const ports = this.ports();
    await Promise.all(
      groups.map((group) =>
        scanSlice(ports, {
          topic: TOPIC,
          ...group,
          scanDeadlineAt: this.now + MINUTE,
          bucketMs: 5 * MINUTE,
        }),
      ),
    );
    if (options.merge === false) return undefined as never;
    const slices = groups.map((g) => g.slice);
    return comparable(await createAuditor(ports).run(this.request(slices)));
  }
}

const comparable = (report: AuditReport): AuditReport => {
  const { timingsMs: _, ...rest } = report;
  return rest;
};

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
      fates: fc.array(fateArb, { minLength: 1, maxLength: 8 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('duplicate' as const),
      stream: fc.nat(1),
      pick: fc.nat(50),
      partition: fc.nat(PARTITIONS - 1),
    }),
  },
  fc.record({
    kind: fc.constant('receive' as const),
    stream: fc.nat(1),
    pick: fc.nat(50),
    size: fc.integer({ min: 1, max: 4 }),
  }),
  fc.record({ kind: fc.constant('untracked' as const), partition: fc.nat(PARTITIONS - 1) }),
  fc.record({ kind: fc.constant('wait' as const), minutes: fc.integer({ min: 1, max: 40 }) }),
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('audit' as const) }) },
);

describe('fan-out audit (core)', () => {
  it('groups partitions 0..n-1 in contiguous slices of at most n per child', () => {
    expect(partitionGroups(5, 2)).toEqual([
      { slice: '0-1', first: 0, last: 1 },
      { slice: '2-3', first: 2, last: 3 },
      { slice: '4-4', first: 4, last: 4 },
    ]);
    expect(partitionGroups(32, 32)).toEqual([{ slice: '0-31', first: 0, last: 31 }]);
    expect(() => partitionGroups(4, 0)).toThrow(RangeError);
  });

  it('reports what one sequential audit reports, run after run, for any grouping', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: PARTITIONS }),
        async (ops, perChild) => {
          const sequential = new World();
          const fanned = new World();
          for (const op of [
            ...ops,
            { kind: 'wait', minutes: 30 } as const,
            { kind: 'audit' } as const,
          ]) {
            sequential.apply(op);
            fanned.apply(op);
            if (op.kind !== 'audit') continue;
            expect(await fanned.fanOut(perChild)).toEqual(await sequential.audit());
          }
          expect(fanned.blocks).toEqual(sequential.blocks);
        },
      ),
      { numRuns: 60 },
    );
  }, 30_000);

  it('names both copies of a duplicate that two children read, with their partitions and sessions', async () => {
    const world = new World();
    world.apply({ kind: 'publish', stream: 0, fates: ['ACKED', 'ACKED'] });
    world.apply({ kind: 'duplicate', stream: 0, pick: 0, partition: 4 });
    const report = await world.fanOut(2);
    expect(report.streams[0]?.producerDuplicates).toEqual([
      {
        seq: 1,
        times: 2,
        copies: [
          { partition: 0, offset: 0, session: 'p1' },
          { partition: 4, offset: 0, session: 'p2' },
        ],
      },
    ]);
  });

  it('a child out of time saves its slice; the next fan-out continues it, counting nothing twice', async () => {
    const sequential = new World();
    const fanned = new World();
    const ops: Op[] = [
      { kind: 'publish', stream: 0, fates: ['ACKED', 'UNKNOWN_LANDED', 'ACKED', 'UNKNOWN_ABSENT'] },
      { kind: 'publish', stream: 0, fates: ['ACKED', 'ACKED', 'ACKED', 'ACKED', 'ACKED', 'ACKED'] },
      { kind: 'duplicate', stream: 0, pick: 1, partition: 3 },
      { kind: 'wait', minutes: 20 },
    ];
    for (const op of ops) {
      sequential.apply(op);
      fanned.apply(op);
    }
    fanned.budgets.set('0-1', 1);
    const cut = await fanned.fanOut(2);
    expect(cut.complete).toBe(false);
    expect(fanned.slices.get('0-1')?.state.complete).toBe(false);
    const whole = await sequential.audit();
    // The first merge took what the other children and the cut one's first record read.
    expect(cut.scanned).toBe(7);
    expect(await fanned.fanOut(2)).toEqual({ ...whole, scanned: whole.scanned - cut.scanned });
    expect(fanned.checkpoint?.state.scanned).toBe(sequential.checkpoint?.state.scanned);
  });

  it('children that run again before a merge continue their slices; a merge then counts each record once', async () => {
    const sequential = new World();
    const fanned = new World();
    const op: Op = {
      kind: 'publish',
      stream: 1,
      fates: ['ACKED', 'ACKED', 'ACKED', 'UNKNOWN_LANDED'],
    };
    sequential.apply(op);
    fanned.apply(op);
    await fanned.fanOut(3, { merge: false });
    for (const w of [sequential, fanned])
      w.apply({ kind: 'duplicate', stream: 1, pick: 0, partition: 5 });
    expect(await fanned.fanOut(3)).toEqual({ ...(await sequential.audit()), scanned: 5 });
  });

  it('a slice read on top of an older checkpoint is not absorbed: its partitions are read again', async () => {
    const world = new World();
    world.apply({ kind: 'publish', stream: 0, fates: ['ACKED', 'ACKED', 'ACKED'] });
    await world.fanOut(2, { merge: false });
    // A sequential audit saves the checkpoint in between: the slices are stale.
    expect((await world.audit()).scanned).toBe(3);
    world.apply({ kind: 'publish', stream: 0, fates: ['ACKED'] });
    const ports = world.ports();
    const report = await createAuditor(ports).run(world.request(['0-1', '2-3', '4-5']));
    expect(report.complete).toBe(false);
    expect(report.scanned).toBe(0);
    const next = await world.fanOut(2);
    expect(next.scanned).toBe(1);
    expect(next.streams[0]).toMatchObject({ produced: 4, inLog: 4, producerDuplicates: [] });
  });
});
