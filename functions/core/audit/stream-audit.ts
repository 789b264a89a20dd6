import type { LedgerBlock } from '../publish/ports.js';
import type { RecordOutcome } from '../shared/outcomes.js';
import { sortNumbers } from './ledger-view.js';
import { cloneCounters, type GroupCounters } from './receipts-view.js';
import { foldRow, KEEP_PLACED, type RowCounts } from './retention.js';
import { type DuplicateRun, SeqCounter, type SeqRange, SeqRanges } from './seq-ranges.js';
import { bucketOf, MAX_PLACED, type Placement, type StreamLog } from './topic-log.js';

// One stream's audit: what the ledger says was produced, what the log holds (by `tally.*`
// headers, as read so far into a StreamLog), and what each downstream group processed — and, for
// every difference, the layer that explains it. Ledger blocks and receipts are streamed in; memory
// grows with gaps, duplicate runs, buckets and findings, not with records. Seqs up to the
// StreamLog's floor are folded (counted in its `older` row): ledger outcomes and receipts of
// those seqs are passed over.

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
    /** Where the ledger says each of them was acknowledged, seq by seq (added by the auditor). */
    readonly ackedEach?: ReadonlyArray<{
      readonly seq: number;
      readonly partition: number;
      readonly offset: number;
    }>;
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
export interface BucketRow extends RowCounts {
  readonly start: string;
  /**
   * Only on the first row when older buckets are not listed one by one: it sums every bucket
   * from `start` up to `until` (those folded out of the checkpoint, then unlisted ones).
   */
  readonly until?: string;
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

/** A group's receipts: every delivery, those it acted on, those its once guard suppressed. */
interface GroupReceipts {
  readonly delivered: SeqCounter;
  readonly acted: SeqCounter;
  readonly suppressed: SeqCounter;
}

export class StreamAudit {
  readonly #groups = new Map<string, SeqCounter>();
  readonly #receipts = new Map<string, Omit<GroupReceipts, 'delivered'>>();

  constructor(
    readonly stream: string,
    private readonly log: StreamLog,
    private readonly options: StreamAuditOptions,
  ) {}

  /** The ledger's sets, kept in the StreamLog so a checkpoint can carry them to the next run. */
  get #ledger() {
    return this.log.ledger;
  }
  get #acked() {
    return this.log.ledger.acked;
  }
  get #unknown() {
    return this.log.ledger.unknown;
  }
  get #produced() {
    return this.log.ledger.produced;
  }
  /** Bucket start → produced seqs whose ledger block was written in it. */
  get #producedBuckets() {
    return this.log.ledger.producedBuckets;
  }

  /** Whether the ledger holds `seq` as UNKNOWN (so the scan keeps where it lands). */
  isUnknown(seq: number): boolean {
    return this.#unknown.has(seq);
  }

  /** All produced seqs (ACKED or UNKNOWN) above the floor. */
  get produced(): SeqRanges {
    return this.#produced;
  }

  /**
   * Adds a block's outcomes above the floor in place of what an earlier version of it (a
   * rewrite: `rewritten`) said; says whether one of them is UNKNOWN.
   */
  replaceLedgerBlock(block: LedgerBlock, rewritten: boolean): boolean {
    const last = block.firstSeq + block.outcomes.length - 1;
    if (rewritten && last > this.log.floor) this.#ledger.removeSeqs(block.firstSeq, last);
    return this.addLedgerBlock(block);
  }

  /** Adds a block's outcomes above the floor; says whether one of them is UNKNOWN. */
  addLedgerBlock(block: LedgerBlock): boolean {
    const { floor } = this.log;
    // Blocks wholly folded cost one comparison.
    if (block.firstSeq + block.outcomes.length - 1 <= floor) return false;
    let unknown = false;
    const judged = block.writtenAt === undefined || block.writtenAt < this.options.judgeBefore;
    const bucketStart = bucketOf(block.writtenAt ?? 0, this.options.bucketMs);
    // A bucket is made only for produced seqs: an empty one would outlive a rewrite's removal.
    const bucket = this.#producedBuckets.get(bucketStart) ?? new SeqRanges();
    // Runs of one status are added as ranges: a block is mostly one status.
    const { firstSeq, outcomes } = block;
    for (let i = Math.max(0, floor + 1 - firstSeq); i < outcomes.length; ) {
      const status = (outcomes[i] as RecordOutcome).status;
      let end = i + 1;
      while (end < outcomes.length && (outcomes[end] as RecordOutcome).status === status) end++;
      const [from, to] = [firstSeq + i, firstSeq + end - 1];
      i = end;
      if (status === 'ACKED') {
        if (judged) this.#acked.addRange(from, to);
      } else if (status === 'UNKNOWN') {
        this.#unknown.addRange(from, to);
        unknown = true;
      } else continue;
      this.#produced.addRange(from, to);
      bucket.addRange(from, to);
    }
    if (!bucket.isEmpty) this.#producedBuckets.set(bucketStart, bucket);
    return unknown;
  }

  /**
   * A receipt: seqs the group acted on (`runs`) and seqs delivered again that its once guard
   * suppressed. Both are deliveries (processed, redelivered); only `runs` can act twice.
   */
  addReceipts(
    group: string,
    runs: readonly SeqRange[],
    suppressed: readonly SeqRange[] = [],
    /** Where the receipt is also folded for the checkpoint (receipts-view.ts), if it is. */
    into?: GroupCounters,
  ) {
    const delivered = this.#groups.get(group) ?? new SeqCounter();
    const split = this.#receipts.get(group) ?? {
      acted: new SeqCounter(),
      suppressed: new SeqCounter(),
    };
    const { floor } = this.log;
    const add = (counter: SeqCounter, list: readonly SeqRange[]) => {
      for (const [from, to] of list)
        if (to > floor) counter.addRange(Math.max(from, floor + 1), to);
    };
    for (const counters of into ? [{ delivered, ...split }, into] : [{ delivered, ...split }]) {
      add(counters.delivered, runs);
      add(counters.delivered, suppressed);
      add(counters.acted, runs);
      add(counters.suppressed, suppressed);
    }
    this.#groups.set(group, delivered);
    this.#receipts.set(group, split);
  }

  /** Starts a group's receipts from those an earlier run folded (before any addReceipts). */
  seedReceipts(group: string, folded: GroupCounters): void {
    const { delivered, acted, suppressed } = cloneCounters(folded);
    this.#groups.set(group, delivered);
    this.#receipts.set(group, { acted, suppressed });
  }

  /**
   * Seqs a finding names whose copies the log state has not placed: repeats whose earlier copy
   * was read before it was known to repeat, and UNKNOWN seqs found before the ledger was read.
   */
  missingPlacements(): SeqRanges {
    const missing = new SeqRanges();
    const { log, placements } = this.log;
    // Only the newest repeats keep their copies in the checkpoint (KEEP_PLACED): looking for
    // older ones again on every run would re-read the log for copies that are then dropped.
    let looked = 0;
    for (const run of log.duplicates().reverse()) {
      for (let seq = run.to; seq >= run.from && looked < KEEP_PLACED; seq--, looked++) {
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
    const runs = log.duplicates();
    for (const run of runs) logDuplicates.addRange(run.from, run.to);
    // The newest are described: older ones were, by earlier runs.
    for (const run of runs.reverse()) {
      for (let seq = run.to; seq >= run.from && producerDuplicates.length < MAX_PLACED; seq--) {
        const copies = [...(placements.get(seq) ?? [])].sort(
          (a, b) => a.partition - b.partition || a.offset - b.offset,
        );
        producerDuplicates.push({ seq, copies, times: run.times });
      }
    }
    producerDuplicates.reverse();
    const consumerDuplicates: Array<AuditFindings['consumerDuplicates'][number]> = [];
    const pending: Array<AuditFindings['pending'][number]> = [];
    const processed: Record<string, number> = {};
    const older = this.log.older;
    for (const [group, counter] of this.#groups) {
      processed[group] = counter.seen().count + (older?.processed[group] ?? 0);
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
      produced: this.#produced.count + (older?.produced ?? 0),
      inLog: inLog.count + (older?.inLog ?? 0),
      processed,
      producerDuplicates,
      consumerDuplicates,
      lost,
      pending,
      unknownLanded,
      unknownAbsent: complete ? this.#unknown.difference(inLog).ranges() : [],
    };
  }

  /**
   * Per time bucket, oldest first: each layer's count of the same seqs (see BucketRow). With
   * `listed`, only the newest `listed` buckets have a row each; a first row sums the rest and
   * what the checkpoint has folded.
   */
  buckets(complete: boolean, listed = Number.POSITIVE_INFINITY): BucketRow[] {
    const starts = this.#starts();
    const shown = starts.slice(Math.max(0, starts.length - listed));
    const layers = this.#layers(complete);
    const rows = shown.map(
      (start): BucketRow => ({
        start: new Date(start).toISOString(),
        ...this.#counts(layers, this.#seqsOf([start])),
      }),
    );
    const unlisted = starts.slice(0, starts.length - shown.length);
    let older = this.log.older;
    if (unlisted.length > 0) {
      const since = unlisted[0] as number;
      const until = (unlisted[unlisted.length - 1] as number) + this.options.bucketMs;
      older = foldRow(older, this.#counts(layers, this.#seqsOf(unlisted)), since, until);
    }
    if (older === undefined) return rows;
    const { since, until, ...counts } = older;
    const first: BucketRow = {
      start: new Date(since).toISOString(),
      until: new Date(until).toISOString(),
      ...counts,
    };
    return [first, ...rows];
  }

  /**
   * Folds the seqs of every bucket that ended by `cutoff` (ms), and any lower seq, into the
   * StreamLog's `older` row, and forgets them here too. Lost and absent counts are final only
   * when `complete` (else folded as 0): the auditor folds incomplete runs only to save at all.
   */
  fold(cutoff: number, complete: boolean): void {
    const { bucketMs } = this.options;
    // Only the buckets that end by the cutoff are sorted: most runs fold one or none.
    const folded: number[] = [];
    for (const start of this.#producedBuckets.keys())
      if (start + bucketMs <= cutoff) folded.push(start);
    for (const start of this.log.buckets.keys())
      if (start + bucketMs <= cutoff && !this.#producedBuckets.has(start)) folded.push(start);
    sortNumbers(folded);
    const seqs = this.#seqsOf(folded);
    const floor = Math.max(seqs.produced.max ?? 0, seqs.logOnly.max ?? 0);
    if (floor <= this.log.floor) return;
    const range = SeqRanges.from([[this.log.floor + 1, floor]]);
    const all = { produced: this.#produced.intersect(range), logOnly: new SeqRanges() };
    for (const bucket of this.log.buckets.values()) all.logOnly = all.logOnly.union(bucket);
    all.logOnly = all.logOnly.intersect(range).difference(this.#produced);
    const since = folded[0] as number;
    const until = (folded[folded.length - 1] as number) + bucketMs;
    this.log.foldThrough(floor, this.#counts(this.#layers(complete), all), since, until);
    const ledger = this.#ledger;
    ledger.acked = ledger.acked.above(floor);
    ledger.unknown = ledger.unknown.above(floor);
    ledger.produced = ledger.produced.above(floor);
    for (const [start, bucket] of this.#producedBuckets) {
      // Most buckets lie wholly above the floor: kept as they are.
      if ((bucket.min as number) > floor) continue;
      const rest = bucket.above(floor);
      if (rest.isEmpty) this.#producedBuckets.delete(start);
      else this.#producedBuckets.set(start, rest);
    }
    for (const counter of this.#groups.values()) counter.dropThrough(floor);
    for (const { acted, suppressed } of this.#receipts.values()) {
      acted.dropThrough(floor);
      suppressed.dropThrough(floor);
    }
    this.log.receipts.dropThrough(floor);
  }

  /** Bucket starts of the ledger's produced seqs and the log's unexplained ones, in order. */
  #starts(): number[] {
    const starts = [...this.#producedBuckets.keys()];
    // The log keeps buckets only for seqs the ledger does not hold: few, mostly none.
    for (const start of this.log.buckets.keys())
      if (!this.#producedBuckets.has(start)) starts.push(start);
    return sortNumbers(starts);
  }

  /** The seqs of the buckets at `starts`: produced in them, or first found in the log there. */
  #seqsOf(starts: readonly number[]): { produced: SeqRanges; logOnly: SeqRanges } {
    if (starts.length === 1) {
      const start = starts[0] as number;
      const logOnly = this.log.buckets.get(start)?.difference(this.#produced);
      return {
        produced: this.#producedBuckets.get(start) ?? new SeqRanges(),
        logOnly: logOnly ?? new SeqRanges(),
      };
    }
    // Added range by range: buckets come in time order, so mostly appends (O(1) each).
    const produced = new SeqRanges();
    const logOnly = new SeqRanges();
    const producedBuckets = this.#producedBuckets;
    const logBuckets = this.log.buckets;
    for (const start of starts) {
      const ofLedger = producedBuckets.get(start);
      if (ofLedger !== undefined) produced.addAll(ofLedger);
      const ofLog = logBuckets.get(start);
      if (ofLog !== undefined) logOnly.addAll(ofLog);
    }
    return { produced, logOnly: logOnly.difference(this.#produced) };
  }

  /** What every row is counted against, taken once for all rows of a call. */
  #layers(complete: boolean): Layers {
    return {
      complete,
      inLog: this.log.log.seen(),
      logRuns: this.log.log.duplicates(),
      groups: [...this.#groups].map(([group, counter]) => {
        const split = this.#receipts.get(group);
        return {
          group,
          seen: counter.seen(),
          runs: counter.duplicates(),
          actedRuns: split?.acted.duplicates() ?? [],
          suppressedSeen: split?.suppressed.seen() ?? new SeqRanges(),
          suppressedRuns: split?.suppressed.duplicates() ?? [],
        };
      }),
    };
  }

  /** Each layer's count of one set of seqs: those `produced`, and those only the log holds. */
  #counts(layers: Layers, of: { produced: SeqRanges; logOnly: SeqRanges }): RowCounts {
    const { complete, inLog, logRuns, groups } = layers;
    const { produced, logOnly } = of;
    const seqs = produced.union(logOnly);
    const found = seqs.intersect(inLog);
    const missing = produced.difference(inLog);
    const perGroup = (f: (g: Layers['groups'][number]) => number) => {
      const counts: Record<string, number> = {};
      for (const g of groups) counts[g.group] = f(g);
      return counts;
    };
    return {
      produced: produced.count,
      inLog: found.count,
      notInLedger: logOnly.count,
      duplicatesInLog: extraCopies(seqs, logRuns),
      lost: complete ? missing.intersect(this.#acked).count : 0,
      unknownAbsent: complete ? missing.intersect(this.#unknown).count : 0,
      processed: perGroup((g) => seqs.intersect(g.seen).count),
      pending: perGroup((g) => found.difference(g.seen).count),
      redelivered: perGroup((g) => extraCopies(seqs, g.runs)),
      suppressed: perGroup(
        (g) => seqs.intersect(g.suppressedSeen).count + extraCopies(seqs, g.suppressedRuns),
      ),
      actedTwice: perGroup((g) => extraCopies(seqs, g.actedRuns)),
    };
  }
}

interface Layers {
  readonly complete: boolean;
  readonly inLog: SeqRanges;
  readonly logRuns: readonly DuplicateRun[];
  readonly groups: ReadonlyArray<{
    readonly group: string;
    readonly seen: SeqRanges;
    readonly runs: readonly DuplicateRun[];
    /** Seqs the group acted on more than once. */
    readonly actedRuns: readonly DuplicateRun[];
    readonly suppressedSeen: SeqRanges;
    readonly suppressedRuns: readonly DuplicateRun[];
  }>;
}
