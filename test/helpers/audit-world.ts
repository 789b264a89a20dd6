import fc from 'fast-check';
import { expect } from 'vitest';
import { createAuditor } from '../../functions/core/audit/auditor.js';
import type {
  AuditPorts,
  AuditReport,
  AuditRequest,
  ScannedRecord,
} from '../../functions/core/audit/ports.js';
import type { SeqRange } from '../../functions/core/audit/seq-ranges.js';
import type { CheckpointJson } from '../../functions/core/audit/topic-log.js';
import type { LedgerBlock } from '../../functions/core/publish/ports.js';
import type { BucketCount } from '../../functions/core/receipts/receipts-input.js';
import type { RecordOutcome } from '../../functions/core/shared/outcomes.js';
import { scanRefusedAfter } from './scan-after.js';

// A simulated world for audit unit tests that run the same operations on two worlds and compare
// their reports: a ledger, a topic of one or more partitions, receipts of one group, stream
// counters and a checkpoint, on fake ports and a simulated clock. Used by the incremental-audit
// test (one partition, blocks on another topic, rewrites) and the fan-out test (six partitions).

export const T0 = Date.UTC(2026, 10, 1);
export const MINUTE = 60_000;
export const TOPIC = 'orders';
export const STREAMS = ['orders', 'refunds'];
export const GROUP = 'billing';

export type Fate = 'ACKED' | 'UNKNOWN_LANDED' | 'UNKNOWN_ABSENT' | 'NOT_SENT' | 'LOST';

export type Op =
  /** `topic` (default TOPIC): a block published to another topic has no record in this log. */
  | { kind: 'publish'; stream: number; fates: Fate[]; topic?: 'orders' | 'other' }
  | { kind: 'hole'; stream: number; size: number }
  | { kind: 'rewrite'; stream: number; pick: number; to: 'ACKED' | 'NOT_SENT' | 'UNKNOWN' }
  /** A second copy (session p2) of a picked block's first record, on `partition` (default 0). */
  | { kind: 'duplicate'; stream: number; pick: number; partition?: number }
  /**
   * A receipt of the group for a picked block's first `size` seqs: dated `lateSeconds` before it
   * is stored (a writer slower than the clock, within the lag), acted on or `suppressed`.
   */
  | {
      kind: 'receive';
      stream: number;
      pick: number;
      size: number;
      lateSeconds?: number;
      suppressed?: boolean;
    }
  /**
   * A count-only receipt of the group for the topic: per bucket, how many minutes before now it
   * starts (a minute long) and its count; dated `lateSeconds` before it is stored.
   */
  | { kind: 'count'; buckets: Array<[agoMinutes: number, count: number]>; lateSeconds?: number }
  | { kind: 'untracked'; partition: number }
  | { kind: 'wait'; minutes: number }
  | { kind: 'audit' };

export interface WorldOptions {
  /** How many partitions the topic has: a stream's records are spread over every one. */
  readonly partitions: number;
  /** The ledger also lists the blocks written since a time (forEachChangedBlock). */
  readonly incremental?: boolean;
  /** Passed as the request's ledgerLagMs when set. */
  readonly ledgerLagMs?: number;
  /** The request's bucketMs (default 5 minutes). */
  readonly bucketMs?: number;
  /** The receipts are also read by write time (forEachBatchSince); default: `incremental`. */
  readonly incrementalReceipts?: boolean;
}

/** A stored receipt: one run of seqs, when it is dated (its sort key) and when it was stored. */
interface WorldReceipt {
  readonly run: SeqRange;
  readonly receivedAt: number;
  readonly storedAt: number;
  readonly suppressed: boolean;
}

/** A stored count-only receipt: its buckets, when it is dated (its sort key) and stored. */
interface WorldCounts {
  readonly buckets: BucketCount[];
  readonly writtenAt: number;
  readonly storedAt: number;
}

/** What two worlds' reports can be compared on: all but the timings. */
export const comparable = (report: AuditReport): AuditReport => {
  const { timingsMs: _, ...rest } = report;
  return rest;
};

/** One world: a ledger, a log of `partitions` partitions, receipts, counters, a checkpoint. */
export class AuditWorld {
  now = T0;
  readonly blocks = new Map<string, Map<number, LedgerBlock>>();
  readonly partitions: ScannedRecord[][];
  readonly receipts = new Map<string, WorldReceipt[]>();
  /** The group's count-only receipts for the topic, as posted. */
  readonly counted: WorldCounts[] = [];
  readonly counters = new Map<string, { lastSeq: number; updatedAt: number }>();
  checkpoint: { state: CheckpointJson; version: number } | undefined;
  /** Slice → the reads still allowed before its deadline (undefined: no limit). */
  readonly budgets = new Map<string, number>();
  /** Blocks handed over by the audit's ledger reads, and how many full reads. */
  blocksRead = 0;
  fullReads = 0;
  /** Receipts handed over by the audit's receipt reads. */
  receiptsRead = 0;
  /** Count-only receipts (posts) handed over by the audit's reads. */
  countsRead = 0;
  #turn = 0;

  constructor(readonly options: WorldOptions) {
    this.partitions = Array.from({ length: options.partitions }, () => []);
  }

  protected put(block: LedgerBlock): void {
    const blocks = this.blocks.get(block.stream) ?? new Map<number, LedgerBlock>();
    this.blocks.set(block.stream, blocks);
    blocks.set(block.firstSeq, { ...block, writtenAt: this.now });
  }

  protected sorted(stream: string): LedgerBlock[] {
    return [...(this.blocks.get(stream)?.values() ?? [])].sort((a, b) => a.firstSeq - b.firstSeq);
  }

  pick(stream: string, pick: number): LedgerBlock | undefined {
    const all = this.sorted(stream);
    return all.length === 0 ? undefined : all[pick % all.length];
  }

  append(partition: number, headers: ScannedRecord['headers']): number {
    const log = this.partitions[partition] as ScannedRecord[];
    log.push({ partition, offset: log.length, timestamp: this.now, headers });
    return log.length - 1;
  }

  #appendCopy(partition: number, stream: string, seq: number, session: string): number {
    const headers = { 'tally.stream': stream, 'tally.seq': String(seq), 'tally.session': session };
    return this.append(partition, headers);
  }

  allocate(stream: string, n: number): number {
    const counter = this.counters.get(stream) ?? { lastSeq: 0, updatedAt: 0 };
    this.counters.set(stream, { lastSeq: counter.lastSeq + n, updatedAt: this.now });
    return counter.lastSeq + 1;
  }

  apply(op: Op): void {
    const stream = 'stream' in op ? (STREAMS[op.stream % STREAMS.length] as string) : '';
    const count = this.options.partitions;
    switch (op.kind) {
      case 'publish': {
        const topic = op.topic ?? TOPIC;
        const firstSeq = this.allocate(stream, op.fates.length);
        const outcomes = op.fates.map((fate, i): RecordOutcome => {
          const seq = firstSeq + i;
          // Records of one stream land on every partition, as keyed records do.
          const partition = this.#turn++ % count;
          if (fate === 'NOT_SENT') return { status: 'NOT_SENT', message: 'deadline' };
          if (fate === 'UNKNOWN_ABSENT') return { status: 'UNKNOWN', message: 'timeout' };
          if (fate === 'LOST') return { status: 'ACKED', partition, offset: '99999' };
          const offset = topic === TOPIC ? this.#appendCopy(partition, stream, seq, 'p1') : 0;
          return fate === 'ACKED'
            ? { status: 'ACKED', partition, offset: String(offset) }
            : { status: 'UNKNOWN', message: 'timeout' };
        });
        this.put({ stream, firstSeq, topic, session: 'p1', idempotencyKey: undefined, outcomes });
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
        this.put({ ...block, outcomes });
        return;
      }
      case 'duplicate': {
        const block = this.pick(stream, op.pick);
        if (block?.topic === TOPIC)
          this.#appendCopy((op.partition ?? 0) % count, stream, block.firstSeq, 'p2');
        return;
      }
      case 'receive': {
        const block = this.pick(stream, op.pick);
        if (block === undefined) return;
        const stored = this.receipts.get(stream) ?? [];
        stored.push({
          run: [block.firstSeq, block.firstSeq + op.size - 1],
          receivedAt: this.now - (op.lateSeconds ?? 0) * 1000,
          storedAt: this.now,
          suppressed: op.suppressed === true,
        });
        this.receipts.set(stream, stored);
        return;
      }
      case 'count':
        this.counted.push({
          buckets: op.buckets.map(([ago, n]) => ({
            start: new Date(this.now - ago * MINUTE).toISOString(),
            end: new Date(this.now - (ago - 1) * MINUTE).toISOString(),
            count: n,
          })),
          writtenAt: this.now - (op.lateSeconds ?? 0) * 1000,
          storedAt: this.now,
        });
        return;
      case 'untracked':
        this.append(op.partition % count, {});
        return;
      case 'wait':
        this.now += op.minutes * MINUTE;
        return;
      case 'audit':
        return;
    }
  }

  #ledger(): AuditPorts['ledger'] {
    const ledger: AuditPorts['ledger'] = {
      forEachBlock: async (stream, onBlock) => {
        this.fullReads++;
        for (const block of this.sorted(stream)) {
          this.blocksRead++;
          onBlock(block);
        }
      },
      find: async (stream, seq) =>
        this.sorted(stream).find((b) => seq >= b.firstSeq && seq < b.firstSeq + b.outcomes.length),
      write: async (block) => {
        this.put(block);
        return String(this.now); // no publisher writes during a run here: every settling lands
      },
    };
    if (this.options.incremental)
      ledger.forEachChangedBlock = async (stream, since, onBlock) => {
        for (const block of this.sorted(stream).reverse()) {
          if ((block.writtenAt ?? 0) < since) continue;
          this.blocksRead++;
          onBlock(block);
        }
      };
    return ledger;
  }

  #receiptsPort(): AuditPorts['receipts'] {
    // As the table's sort key orders them: by the time they are dated, not stored.
    const batches = (group: string, stream: string, after: number) =>
      group !== GROUP
        ? []
        : (this.receipts.get(stream) ?? [])
            .filter((r) => r.storedAt <= this.now && r.receivedAt > after)
            .sort((a, b) => a.receivedAt - b.receivedAt);
    const posts = (group: string, after: number) =>
      group !== GROUP
        ? []
        : this.counted
            .filter((c) => c.storedAt <= this.now && c.writtenAt > after)
            .sort((a, b) => a.writtenAt - b.writtenAt);
    const batch = (r: WorldReceipt) =>
      r.suppressed ? { seqs: [], suppressed: [r.run] } : { seqs: [r.run] };
    const port: AuditPorts['receipts'] = {
      forEachBatch: async (group, stream, onBatch) => {
        for (const r of batches(group, stream, Number.NEGATIVE_INFINITY)) {
          this.receiptsRead++;
          onBatch(batch(r));
        }
      },
      counts: async (group) =>
        posts(group, Number.NEGATIVE_INFINITY).flatMap((c) => {
          this.countsRead++;
          return c.buckets;
        }),
    };
    if (this.options.incrementalReceipts ?? this.options.incremental)
      port.forEachBatchSince = async (group, stream, after, onBatch) => {
        for (const r of batches(group, stream, after ?? Number.NEGATIVE_INFINITY)) {
          this.receiptsRead++;
          onBatch(batch(r), r.receivedAt);
        }
      };
    if (this.options.incrementalReceipts ?? this.options.incremental)
      port.countsSince = async (group, _topic, after, onCounts) => {
        for (const c of posts(group, after ?? Number.NEGATIVE_INFINITY)) {
          this.countsRead++;
          onCounts(c.buckets, c.writtenAt);
        }
      };
    return port;
  }

  #scan(): AuditPorts['log']['scan'] {
    return async (_topic, request, onRecord) => {
      const refused = await scanRefusedAfter(request);
      if (refused) return refused;
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
    };
  }

  ports(): AuditPorts {
    return {
      clock: () => this.now,
      ledger: this.#ledger(),
      log: { scan: this.#scan() },
      receipts: this.#receiptsPort(),
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
          // A range ends where a block starts inside it, as the DynamoDB adapter's does.
          void: async (block) => {
            const starts = [...(this.blocks.get(block.stream)?.keys() ?? [])];
            if (starts.includes(block.firstSeq)) return 0;
            const last = block.firstSeq + block.outcomes.length - 1;
            const inside = starts.filter((s) => s > block.firstSeq && s <= last);
            const n = (inside.length > 0 ? Math.min(...inside) : last + 1) - block.firstSeq;
            this.put({ ...block, outcomes: block.outcomes.slice(0, n) });
            return n;
          },
          fill: async (block) => {
            if (this.blocks.get(block.stream)?.has(block.firstSeq)) return false;
            this.put(block);
            return true;
          },
        },
      },
    };
  }

  request(fanOut?: readonly string[]): AuditRequest {
    const { ledgerLagMs } = this.options;
    return {
      topic: TOPIC,
      groups: [GROUP],
      streams: STREAMS,
      scanDeadlineAt: this.now + MINUTE,
      horizonMs: 10 * MINUTE,
      bucketMs: this.options.bucketMs ?? 5 * MINUTE,
      retentionMs: 60 * MINUTE,
      ...(ledgerLagMs !== undefined && { ledgerLagMs }),
      ...(fanOut && { fanOut: { slices: fanOut } }),
    };
  }

  /** One sequential audit, comparable with another world's. */
  async audit(): Promise<AuditReport> {
    return comparable(await createAuditor(this.ports()).run(this.request()));
  }
}

/**
 * Applies every op to each of the worlds in turn, in step; after each `audit` op, `onAudit` (which
 * audits the worlds and compares their reports).
 */
export async function applyInStep(
  worlds: readonly AuditWorld[],
  ops: readonly Op[],
  onAudit: () => Promise<void> = async () => {},
): Promise<void> {
  for (const op of ops) {
    for (const world of worlds) world.apply(op);
    if (op.kind === 'audit') await onAudit();
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

/** Arbitraries of the ops both tests draw (each weighs and completes them its own way). */
export const opArbs = {
  /** A publish of 1 to `maxFates` records (mostly ACKED) to a stream, and to a `topic` if given. */
  publish: (maxFates: number, topic?: fc.Arbitrary<'orders' | 'other'>): fc.Arbitrary<Op> => {
    const publish = {
      kind: fc.constant('publish' as const),
      stream: fc.nat(1),
      fates: fc.array(fateArb, { minLength: 1, maxLength: maxFates }),
    };
    return topic === undefined ? fc.record(publish) : fc.record({ ...publish, topic });
  },
  receive: fc.record(
    {
      kind: fc.constant('receive' as const),
      stream: fc.nat(1),
      pick: fc.nat(50),
      size: fc.integer({ min: 1, max: 4 }),
      lateSeconds: fc.integer({ min: 0, max: 59 }),
      suppressed: fc.boolean(),
    },
    { requiredKeys: ['kind', 'stream', 'pick', 'size'] },
  ),
  /** A count-only receipt of one to three buckets, up to a day old, mostly recent. */
  count: fc.record(
    {
      kind: fc.constant('count' as const),
      buckets: fc.array(
        fc.tuple(
          fc.oneof({ weight: 4, arbitrary: fc.nat(30) }, fc.integer({ min: 31, max: 1440 })),
          fc.nat(50),
        ),
        { minLength: 1, maxLength: 3 },
      ),
      lateSeconds: fc.integer({ min: 0, max: 59 }),
    },
    { requiredKeys: ['kind', 'buckets'] },
  ),
  wait: fc.record({ kind: fc.constant('wait' as const), minutes: fc.integer({ min: 1, max: 40 }) }),
};
