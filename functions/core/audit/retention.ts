import { TallyError } from '../shared/errors.js';

// What keeps an audit's checkpoint and report bounded by configuration and findings rather than
// by the topic's age: detail older than a retention horizon is folded into one row of totals
// per stream, and the lists a report names are capped (their totals stay in the rows).

/** Detail kept in the checkpoint by default: a week of buckets, seq ranges and placements. */
export const DEFAULT_RETENTION_MS = 7 * 86_400_000;
/** Newest time buckets a report lists per stream (and for the topic); older ones are one row. */
export const REPORT_ROWS = 24;
/** Newest items a report names per list per stream (counts stay whole). */
export const LIST_CAP = 100;
/** Newest described duplicates whose copies the checkpoint keeps per stream. */
export const KEEP_PLACED = 100;

/** The counts of one time bucket of a stream, each about the same set of seqs (see BucketRow). */
export interface RowCounts {
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
  /**
   * Deliveries the group's once guard suppressed (already done): redeliveries that did not act.
   * Absent from rows folded before the guard existed.
   */
  readonly suppressed?: Readonly<Record<string, number>>;
  /** Extra times a group acted on a seq: its redeliveries that were not suppressed. */
  readonly actedTwice?: Readonly<Record<string, number>>;
}

/** Totals of every bucket from `since` to `until` (ms), folded out of the checkpoint's detail. */
export interface FoldedRow extends RowCounts {
  readonly since: number;
  readonly until: number;
}

const addRecords = (a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>) => {
  const sum: Record<string, number> = { ...a };
  for (const [key, n] of Object.entries(b)) sum[key] = (sum[key] ?? 0) + n;
  return sum;
};

export function addCounts(a: RowCounts, b: RowCounts): RowCounts {
  return {
    produced: a.produced + b.produced,
    inLog: a.inLog + b.inLog,
    notInLedger: a.notInLedger + b.notInLedger,
    duplicatesInLog: a.duplicatesInLog + b.duplicatesInLog,
    lost: a.lost + b.lost,
    unknownAbsent: a.unknownAbsent + b.unknownAbsent,
    processed: addRecords(a.processed, b.processed),
    pending: addRecords(a.pending, b.pending),
    redelivered: addRecords(a.redelivered, b.redelivered),
    suppressed: addRecords(a.suppressed ?? {}, b.suppressed ?? {}),
    actedTwice: addRecords(a.actedTwice ?? {}, b.actedTwice ?? {}),
  };
}

/** `row` added into `folded` (or alone), spanning both. */
export function foldRow(
  folded: FoldedRow | undefined,
  row: RowCounts,
  since: number,
  until: number,
): FoldedRow {
  if (folded === undefined) return { ...row, since, until };
  return {
    ...addCounts(folded, row),
    since: Math.min(folded.since, since),
    until: Math.max(folded.until, until),
  };
}

/** The newest `cap` items of a list in seq order, and how many were left off. */
export function newest<T>(items: readonly T[], cap = LIST_CAP): { kept: T[]; leftOff: number } {
  const leftOff = Math.max(0, items.length - cap);
  return { kept: items.slice(leftOff), leftOff };
}

/**
 * A checkpoint that cannot be stored (DynamoDB's 400 KB item): not retriable as it is. The
 * auditor answers it by folding all detail read so far and saving again, so it never repeats.
 */
export class CheckpointTooLargeError extends TallyError {
  readonly code = 'CHECKPOINT_TOO_LARGE';
  readonly status = 500;
  readonly retriable = false;

  constructor(
    readonly topic: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      `the audit checkpoint of ${topic} is ${bytes} bytes gzipped, over the ${limit} bytes one DynamoDB item can hold`,
    );
  }
}
