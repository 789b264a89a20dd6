import type { RecordOutcome } from './outcomes.js';
import { PlacementRuns } from './placement-runs.js';
import type { LedgerBlock } from './publish-ports.js';
import { SeqCounter, type SeqRange, SeqRanges } from './seq-ranges.js';

// One stream's audit: what the ledger says was produced, what the log holds (by `tally.*`
// headers), and what each downstream group processed — and, for every difference, the layer
// that explains it. Memory grows with runs and findings, not with records.

export interface LogEntry {
  readonly seq: number;
  readonly partition: number;
  readonly offset: number;
  readonly session: string;
}

export interface AuditFindings {
  readonly stream: string;
  readonly produced: number;
  readonly inLog: number;
  readonly processed: Readonly<Record<string, number>>;
  /** The same seq at two or more offsets: a retry that crossed producer sessions. */
  readonly producerDuplicates: ReadonlyArray<{
    readonly seq: number;
    readonly copies: readonly ReturnType<PlacementRuns['placementsOf']>[number][];
  }>;
  /** The log holds a seq once, a group processed it more than once (redelivery). */
  readonly consumerDuplicates: ReadonlyArray<{
    readonly group: string;
    readonly from: number;
    readonly to: number;
    readonly times: number;
  }>;
  /** ACKED in the ledger, absent from the log. */
  readonly lost: ReadonlyArray<{ readonly from: number; readonly to: number }>;
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

/** At most this many duplicate seqs are described one by one; the rest are counted in runs. */
const MAX_DESCRIBED = 1000;

export class StreamAudit {
  readonly #acked = new SeqRanges();
  readonly #unknown = new SeqRanges();
  readonly #produced = new SeqRanges();
  readonly #log = new SeqCounter();
  readonly #placements = new PlacementRuns();
  readonly #groups = new Map<string, SeqCounter>();

  constructor(readonly stream: string) {}

  addLedgerBlock(block: LedgerBlock): void {
    block.outcomes.forEach((outcome: RecordOutcome, i) => {
      const seq = block.firstSeq + i;
      if (outcome.status === 'ACKED') this.#acked.add(seq);
      if (outcome.status === 'UNKNOWN') this.#unknown.add(seq);
      if (outcome.status === 'ACKED' || outcome.status === 'UNKNOWN') this.#produced.add(seq);
    });
  }

  addLogEntry(entry: LogEntry): void {
    this.#log.add(entry.seq);
    this.#placements.add(entry.seq, entry);
  }

  addReceipts(group: string, runs: readonly SeqRange[]): void {
    const counter = this.#groups.get(group) ?? new SeqCounter();
    for (const [from, to] of runs) counter.addRange(from, to);
    this.#groups.set(group, counter);
  }

  findings(): AuditFindings {
    const inLog = this.#log.seen();
    const logDuplicates = new SeqRanges();
    const producerDuplicates: Array<AuditFindings['producerDuplicates'][number]> = [];
    for (const run of this.#log.duplicates()) {
      logDuplicates.addRange(run.from, run.to);
      for (let seq = run.from; seq <= run.to && producerDuplicates.length < MAX_DESCRIBED; seq++) {
        producerDuplicates.push({ seq, copies: this.#placements.placementsOf(seq) });
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
      for (let seq = from; seq <= to && unknownLanded.length < MAX_DESCRIBED; seq++) {
        const [first] = this.#placements.placementsOf(seq);
        if (first) unknownLanded.push({ seq, partition: first.partition, offset: first.offset });
      }
    }
    return {
      stream: this.stream,
      produced: this.#produced.count,
      inLog: inLog.count,
      processed,
      producerDuplicates,
      consumerDuplicates,
      lost: this.#acked
        .difference(inLog)
        .ranges()
        .map(([from, to]) => ({ from, to })),
      pending,
      unknownLanded,
      unknownAbsent: this.#unknown.difference(inLog).ranges(),
    };
  }
}
