import { bucketOf, MAX_PLACED, type Placement, type StreamLog } from './audit-state.js';
import type { RecordOutcome } from './outcomes.js';
import type { LedgerBlock } from './publish-ports.js';
import { SeqCounter, type SeqRange, SeqRanges } from './seq-ranges.js';

// One stream's audit: what the ledger says was produced, what the log holds (by `tally.*`
// headers, as read so far into a StreamLog), and what each downstream group processed — and, for
// every difference, the layer that explains it. Ledger blocks and receipts are streamed in; memory
// grows with gaps, duplicate runs, buckets and findings, not with records.

export interface AuditFindings {
  readonly stream: string;
  readonly produced: number;
  readonly inLog: number;
  readonly processed: Readonly<Record<string, number>>;
  /** The same seq at two or more offsets: a retry that crossed producer sessions. */
  readonly producerDuplicates: ReadonlyArray<{
    readonly seq: number;
    /** Every copy found, by partition and offset; fewer than `times` when a copy was not placed. */
    readonly copies: readonly Placement[];
    readonly times: number;
  }>;
  /** The log holds a seq once, a group processed it more than once (redelivery). */
  readonly consumerDuplicates: ReadonlyArray<{
    readonly group: string;
    readonly from: number;
    readonly to: number;
    readonly times: number;
  }>;
  /** ACKED in the ledger, never found in the log (only judged once the log is read to its end). */
  readonly lost: ReadonlyArray<{
    readonly from: number;
    readonly to: number;
    /** Where the ledger says the first of them was acknowledged (added by the auditor). */
    readonly acked?: { readonly partition: number; readonly offset: number };
  }>;
  /** In the log, not yet processed by a group. */
  readonly pending: ReadonlyArray<{
    readonly group: string;
    readonly from: number;
    readonly to: number;
  }>;
  /** UNKNOWN outcomes settled by the log: found (landed, with where) or not (not written). */
  readonly unknownLanded: ReadonlyArray<{
    readonly seq: number;
    readonly partition: number;
    readonly offset: number;
  }>;
  readonly unknownAbsent: readonly SeqRange[];
}

/**
 * One time bucket of a stream: the seqs produced in it (by the ledger's time) or, for seqs the
 * ledger does not hold, first found in the log in it. Every count refers to that same set, so
 * `produced + notInLedger − inLog = lost + unknownAbsent (+ what is not read yet)` and
 * `inLog − processed[g] = pending[g]` (less what g processed that the log no longer holds).
 */
export interface BucketRow {
  readonly start: string;
  readonly produced: number;
  readonly inLog: number;
  /** In the log with no ACKED/UNKNOWN outcome in the ledger. */
  readonly notInLedger: number;
  /** Extra copies in the log (producer-side duplicates). */
  readonly duplicatesInLog: number;
  readonly lost: number;
  readonly unknownAbsent: number;
  readonly processed: Readonly<Record<string, number>>;
  readonly pending: Readonly<Record<string, number>>;
  /** Extra deliveries per group (consumer-side duplicates). */
  readonly redelivered: Readonly<Record<string, number>>;
}

export interface StreamAuditOptions {
  readonly bucketMs: number;
  /**
   * Blocks written at or after this time (ms) are not judged lost: their records may lie past
   * the offsets this run reads.
   */
  readonly judgeBefore: number;
}

const extraCopies = (
  set: SeqRanges,
  runs: ReadonlyArray<{ from: number; to: number; times: number }>,
): number => {
  let extra = 0;
  for (const run of runs) {
    for (const [from, to] of set.runsWithin(run.from, run.to))
      extra += (to - from + 1) * (run.times - 1);
  }
  return extra;
};

export class StreamAudit {
  readonly #acked = new SeqRanges();
  readonly #unknown = new SeqRanges();
  readonly #produced = new SeqRanges();
  /** Bucket start → produced seqs whose ledger block was written in it. */
  readonly #producedBuckets = new Map<number, SeqRanges>();
  readonly #groups = new Map<string, SeqCounter>();

  constructor(
    readonly stream: string,
    private readonly log: StreamLog,
    private readonly options: StreamAuditOptions,
  ) {}

  /** Whether the ledger holds `seq` as UNKNOWN (so the scan keeps where it lands). */
  isUnknown(seq: number): boolean {
    return this.#unknown.has(seq);
  }

  addLedgerBlock(block: LedgerBlock): void {
    const judged = block.writtenAt === undefined || block.writtenAt < this.options.judgeBefore;
    const bucketStart = bucketOf(block.writtenAt ?? 0, this.options.bucketMs);
    const bucket = this.#producedBuckets.get(bucketStart) ?? new SeqRanges();
    this.#producedBuckets.set(bucketStart, bucket);
    block.outcomes.forEach((outcome: RecordOutcome, i) => {
      const seq = block.firstSeq + i;
      if (outcome.status === 'ACKED') {
        if (judged) this.#acked.add(seq);
      } else if (outcome.status === 'UNKNOWN') {
        this.#unknown.add(seq);
      } else {
        return;
      }
      this.#produced.add(seq);
      bucket.add(seq);
    });
  }

  addReceipts(group: string, runs: readonly SeqRange[]): void {
    const counter = this.#groups.get(group) ?? new SeqCounter();
    for (const [from, to] of runs) counter.addRange(from, to);
    this.#groups.set(group, counter);
  }

  /**
   * Seqs a finding names whose copies the log state has not placed: repeats whose earlier copy
   * was read before it was known to repeat, and UNKNOWN seqs found before the ledger was read.
   */
  missingPlacements(): SeqRanges {
    const missing = new SeqRanges();
    const { log, placements } = this.log;
    for (const run of log.duplicates()) {
      for (let seq = run.from; seq <= run.to && missing.count < MAX_PLACED; seq++) {
        if ((placements.get(seq)?.length ?? 0) < run.times) missing.add(seq);
      }
    }
    for (const [from, to] of this.#unknown.intersect(log.seen()).ranges()) {
      for (let seq = from; seq <= to && missing.count < MAX_PLACED; seq++) {
        if (!placements.has(seq)) missing.add(seq);
      }
    }
    return missing;
  }

  /** `complete`: the log was read to its end, so absence from it means something. */
  findings(complete: boolean): AuditFindings {
    const { log, placements } = this.log;
    const inLog = log.seen();
    const logDuplicates = new SeqRanges();
    const producerDuplicates: Array<AuditFindings['producerDuplicates'][number]> = [];
    for (const run of log.duplicates()) {
      logDuplicates.addRange(run.from, run.to);
      for (let seq = run.from; seq <= run.to && producerDuplicates.length < MAX_PLACED; seq++) {
        const copies = [...(placements.get(seq) ?? [])].sort(
          (a, b) => a.partition - b.partition || a.offset - b.offset,
        );
        producerDuplicates.push({ seq, copies, times: run.times });
      }
    }
    const consumerDuplicates: Array<AuditFindings['consumerDuplicates'][number]> = [];
    const pending: Array<AuditFindings['pending'][number]> = [];
    const processed: Record<string, number> = {};
    for (const [group, counter] of this.#groups) {
      processed[group] = counter.seen().count;
      for (const run of counter.duplicates()) {
        // Redelivery is a consumer-side duplicate only where the log itself holds one copy.
        const single = SeqRanges.from([[run.from, run.to]]).difference(logDuplicates);
        for (const [from, to] of single.ranges())
          consumerDuplicates.push({ group, from, to, times: run.times });
      }
      for (const [from, to] of inLog.difference(counter.seen()).ranges())
        pending.push({ group, from, to });
    }
    const unknownLanded: Array<AuditFindings['unknownLanded'][number]> = [];
    for (const [from, to] of this.#unknown.intersect(inLog).ranges()) {
      for (let seq = from; seq <= to && unknownLanded.length < MAX_PLACED; seq++) {
        const [first] = placements.get(seq) ?? [];
        if (first) unknownLanded.push({ seq, partition: first.partition, offset: first.offset });
      }
    }
    const lost = complete
      ? this.#acked
          .difference(inLog)
          .ranges()
          .map(([from, to]) => ({ from, to }))
      : [];
    return {
      stream: this.stream,
      produced: this.#produced.count,
      inLog: inLog.count,
      processed,
      producerDuplicates,
      consumerDuplicates,
      lost,
      pending,
      unknownLanded,
      unknownAbsent: complete ? this.#unknown.difference(inLog).ranges() : [],
    };
  }

  /** Per time bucket, oldest first: each layer's count of the same seqs (see BucketRow). */
  buckets(complete: boolean): BucketRow[] {
    const inLog = this.log.log.seen();
    const logRuns = this.log.log.duplicates();
    const starts = [...new Set([...this.#producedBuckets.keys(), ...this.log.buckets.keys()])];
    starts.sort((a, b) => a - b);
    const groups = [...this.#groups].map(([group, counter]) => ({
      group,
      seen: counter.seen(),
      runs: counter.duplicates(),
    }));
    return starts.map((start): BucketRow => {
      const produced = this.#producedBuckets.get(start) ?? new SeqRanges();
      const notInLedger = (this.log.buckets.get(start) ?? new SeqRanges()).difference(
        this.#produced,
      );
      const seqs = produced.union(notInLedger);
      const found = seqs.intersect(inLog);
      const missing = produced.difference(inLog);
      const perGroup = (f: (g: (typeof groups)[number]) => number) =>
        Object.fromEntries(groups.map((g) => [g.group, f(g)]));
      return {
        start: new Date(start).toISOString(),
        produced: produced.count,
        inLog: found.count,
        notInLedger: notInLedger.count,
        duplicatesInLog: extraCopies(seqs, logRuns),
        lost: complete ? missing.intersect(this.#acked).count : 0,
        unknownAbsent: complete ? missing.intersect(this.#unknown).count : 0,
        processed: perGroup((g) => seqs.intersect(g.seen).count),
        pending: perGroup((g) => found.difference(g.seen).count),
        redelivered: perGroup((g) => extraCopies(seqs, g.runs)),
      };
    });
  }
}
