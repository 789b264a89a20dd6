import type { Ledger, LedgerBlock, TxnSettler } from '../publish/ports.js';
import type { BucketCount } from '../receipts/receipts-input.js';
import type { SeqFateFigures, SeqFatePorts } from './seq-fates.js';
import type { SeqRange } from './seq-ranges.js';
import type { AuditFindings, BucketRow } from './stream-audit.js';
import type { CheckpointJson } from './topic-log.js';

// The audit's ports and the shapes it reads and reports: the auditor (auditor.ts) and its
// helpers (links.ts, placing.ts, merge-slices.ts) take them from here.

export interface ScannedRecord {
  readonly partition: number;
  readonly offset: number;
  /** The record's timestamp, ms since the epoch. */
  readonly timestamp: number;
  /**
   * The `tally.stream`, `tally.seq` and `tally.session` header values as text (the first value
   * of a repeated header); the audit reads no other header.
   */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /**
   * A record of an aborted transaction: in the log, never seen by a read_committed consumer.
   * Counted apart (`abortedCopies`), neither a copy nor a duplicate.
   */
  readonly aborted?: true;
}

/** What the audit reads of one receipt batch. */
export interface ReceiptBatchSeqs {
  readonly seqs: readonly SeqRange[];
  /** Seqs the group's once guard suppressed (delivered again, not acted on). */
  readonly suppressed?: readonly SeqRange[];
}

export interface ScanRequest {
  /** Partition → first offset to read; a partition not named is read from its log start. */
  readonly from?: ReadonlyMap<number, number>;
  /**
   * Partition → offset to stop before; default: the high watermarks when the scan starts.
   * With `until`, partitions it does not name are not read at all.
   */
  readonly until?: ReadonlyMap<number, number>;
  /** The scan stops between batches at this time (ms since the epoch) and reports where. */
  readonly deadlineAt: number;
  /**
   * Records are handed over only once this settles: the scan connects, joins and fetches in the
   * meantime (the audit reads the ledger then). If it rejects, the scan stops before handing
   * over a record (complete: false) and leaves the error to whoever holds the promise.
   */
  readonly after?: Promise<unknown>;
}

export interface ScanResult {
  readonly scanned: number;
  /** Partition → next offset to read (where this scan stopped, or its end). */
  readonly next: ReadonlyMap<number, number>;
  /** Partition → log start offset when the scan started. */
  readonly logStart: ReadonlyMap<number, number>;
  /** Every partition was read to its end before the deadline. */
  readonly complete: boolean;
}

export interface AuditPorts {
  readonly ledger: {
    forEachBlock(stream: string, onBlock: (block: LedgerBlock) => void): Promise<void>;
    /**
     * The blocks of a stream written or rewritten at or after `since` (ms since the epoch), in
     * any order, possibly with some older ones. Without it, every run reads the whole ledger.
     */
    forEachChangedBlock?(
      stream: string,
      since: number,
      onBlock: (block: LedgerBlock) => void,
    ): Promise<void>;
    find(stream: string, seq: number): Promise<LedgerBlock | undefined>;
    /** A pending VOID range read (its audit stopped before checking it): seqs VOID once checked. */
    confirmVoid?(range: LedgerBlock): Promise<number>;
    /**
     * Settles a block, only while it is still the version read (`over`, when the store keeps
     * versions): undefined when a retry reopened it since, and nothing is written.
     */
    write(
      block: LedgerBlock,
      deadline?: undefined,
      over?: LedgerBlock['version'],
    ): Promise<string | undefined>;
  };
  readonly log: {
    scan(
      topic: string,
      request: ScanRequest,
      onRecord: (record: ScannedRecord) => void,
    ): Promise<ScanResult>;
  };
  readonly receipts: {
    forEachBatch(
      group: string,
      stream: string,
      onBatch: (batch: ReceiptBatchSeqs) => void,
    ): Promise<void>;
    /**
     * The batches written after `after` (ms; undefined: every one), oldest first, each with when
     * it was written: a run reads only the receipts since its checkpoint's (receipts-view.ts).
     * Without it, every run reads every receipt.
     */
    forEachBatchSince?(
      group: string,
      stream: string,
      after: number | undefined,
      onBatch: (batch: ReceiptBatchSeqs, receivedAt: number) => void,
    ): Promise<void>;
    /** Count-only receipts (Chaperone-style) a group posted for a topic. */
    counts(group: string, topic: string): Promise<BucketCount[]>;
    /**
     * The count-only receipts posted after `after` (ms; undefined: every one), oldest first, each
     * post's buckets with when it was written: a run reads only those since its checkpoint's
     * (counted-view.ts). Without it, every run reads every count-only receipt.
     */
    countsSince?(
      group: string,
      topic: string,
      after: number | undefined,
      onCounts: (buckets: readonly BucketCount[], writtenAt: number) => void,
    ): Promise<void>;
  };
  readonly checkpoints: {
    load(topic: string): Promise<{ state: CheckpointJson; version: number } | undefined>;
    /** Saves only if the stored version is still `version` (0: none yet); else ConflictError. */
    save(topic: string, state: CheckpointJson, version: number): Promise<void>;
  };
  /** The streams' counters, to find seqs with no fate and void the old ones (audit-holes.ts). */
  readonly seqFates?: SeqFatePorts;
  /** Reconcile's REWIND/LOST events of a group on a topic, to explain consumer-side duplicates. */
  readonly reconcile?: { events(group: string, topic: string): Promise<ReconcileEvent[]> };
  /** Now, in ms since the epoch (default Date.now). */
  readonly clock?: () => number;
  /**
   * Settles transactional blocks left SENDING or PREPARED once past their transaction's timeout
   * (core/publish/txn-settle.ts, read only, never a fence). Absent: they wait for a keyed retry
   * or a lookup, and their UNKNOWN outcomes follow the UNKNOWN rules.
   */
  readonly transactions?: {
    readonly settler: TxnSettler;
    readonly ledger: Pick<Ledger, 'write' | 'find'>;
    readonly transactionTimeoutMs: number;
  };
  /** Where fan-out children keep what they read of their partitions (audit-slice.ts). */
  readonly slices?: SlicePorts;
}

export interface ReconcileEvent {
  readonly at: string;
  readonly partition: number;
  readonly status: 'REWIND' | 'LOST';
  readonly detail: object | undefined;
}

type ConsumerDuplicate = AuditFindings['consumerDuplicates'][number];

/**
 * Findings, with each consumer-side duplicate linked to the reconcile events that explain it.
 * Each list names its newest LIST_CAP items; `leftOff` counts the older ones per list (their
 * totals are in the rows).
 */
export type LinkedFindings = Omit<AuditFindings, 'consumerDuplicates'> & {
  readonly consumerDuplicates: ReadonlyArray<
    ConsumerDuplicate & { readonly reconcileEvents: readonly ReconcileEvent[] }
  >;
  readonly buckets: readonly BucketRow[];
  /** Records read after their seq was folded: a late duplicate or a late first copy. */
  readonly belowFloor?: number;
  /**
   * Copies of aborted transactions in the log (a read_committed consumer never sees them):
   * neither duplicates nor losses. `aborted` names the newest (at most 100), newest first.
   */
  readonly abortedCopies?: number;
  readonly aborted?: ReadonlyArray<{
    readonly seq: number;
    readonly partition: number;
    readonly offset: number;
    readonly session: string;
  }>;
  readonly leftOff?: Readonly<Record<string, number>>;
} & Partial<SeqFateFigures>;

export interface AuditRequest {
  readonly topic: string;
  readonly groups: readonly string[];
  /** Reading the log stops here (ms since the epoch); the rest of the run needs time after. */
  readonly scanDeadlineAt: number;
  /**
   * An UNKNOWN absent from the log is settled as not written only when its block is older than
   * this: a request still in flight must not be judged.
   */
  readonly horizonMs: number;
  readonly bucketMs: number;
  /** Streams to compare even if none of their records is in the log (default: the topic's name). */
  readonly streams?: readonly string[];
  /**
   * Detail older than this (ms) is folded into one row of totals per stream and for the topic
   * (default DEFAULT_RETENTION_MS, 7 days): what bounds the checkpoint.
   */
  readonly retentionMs?: number;
  /**
   * How long a ledger write may take to show among the changed blocks after its write time
   * (in-flight puts, index lag, clocks): each run reads again the blocks written this long
   * before the previous one started (default LEDGER_LAG_MS). The receipts' too: those written
   * under a time later than this before the run's start are read again by the next run.
   */
  readonly ledgerLagMs?: number;
  /**
   * A fan-out merge (audit-merge.ts): instead of reading the log, fold in the slices these
   * children read since the checkpoint this run loads; the rest of the run is unchanged.
   */
  readonly fanOut?: { readonly slices: readonly string[] };
}

export interface AuditReport {
  readonly topic: string;
  readonly at: string;
  /** The log was read to the high watermarks of this run; otherwise the next run continues. */
  readonly complete: boolean;
  /** Records read by this run. */
  readonly scanned: number;
  /** Records read by every run so far. */
  readonly scannedTotal: number;
  /** Records in the topic without `tally.*` headers (not published through Tally). */
  readonly untracked: number;
  /** Records removed from the log (retention, deleteRecords) before any audit read them. */
  readonly unread: number;
  /** Where the next run starts reading, per partition. */
  readonly checkpoint: ReadonlyArray<{ readonly partition: number; readonly next: number }>;
  readonly streams: readonly LinkedFindings[];
  /** Per time bucket: records of any kind in the log, and count-only receipts per group. */
  readonly topicBuckets: ReadonlyArray<{
    readonly start: string;
    /** On a first row summing every bucket from `start` to here (folded or not listed). */
    readonly until?: string;
    readonly inLog: number;
    readonly counted: Readonly<Record<string, number>>;
  }>;
  /** UNKNOWN outcomes this run settled in the ledger. */
  readonly settled: { readonly landed: number; readonly notWritten: number };
  /** Wall time per phase (ledger, scan, receipts, lookup, compare, checkpoint), ms. */
  readonly timingsMs?: Readonly<Record<string, number>>;
  /** Detail before `foldedBefore` is only in totals; `overflow` says why a save folded it all. */
  readonly retention?: {
    readonly horizonMs: number;
    readonly foldedBefore?: string;
    readonly overflow?: string;
  };
}

export interface SliceJson {
  readonly version: 1;
  readonly topic: string;
  readonly slice: string;
  /** The version of the topic's checkpoint this slice was read on top of (0: none yet). */
  readonly basedOn: number;
  /** The child's last run read its partitions to their high watermarks. */
  readonly complete: boolean;
  /** What the slice read, in the checkpoint's form; `next` is where it stopped. */
  readonly read: CheckpointJson;
}

export interface SlicePorts {
  load(topic: string, slice: string): Promise<{ state: SliceJson; version: number } | undefined>;
  /** Saves only if the stored version is still `version` (0: none yet); else ConflictError. */
  save(topic: string, slice: string, state: SliceJson, version: number): Promise<void>;
}
