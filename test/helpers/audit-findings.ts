import type { AuditReport, LinkedFindings } from '../../functions/core/audit/ports.js';
import { LIST_CAP } from '../../functions/core/audit/retention.js';
import type { BucketRow } from '../../functions/core/audit/stream-audit.js';

// Audit findings for the tests of the stream audit, of the stored reports and of the pages that
// render them: a stream that found nothing, one time bucket's row spelt out in full, a stored
// report's shell, and the largest findings one stream can report.

/** A stream's findings when nothing was produced, read or processed (buckets aside). */
export const noFindings = (stream: string) => ({
  stream,
  produced: 0,
  inLog: 0,
  processed: {},
  producerDuplicates: [],
  consumerDuplicates: [],
  lost: [],
  pending: [],
  unknownLanded: [],
  unknownAbsent: [],
});

type LayerCounts = Pick<
  BucketRow,
  'produced' | 'inLog' | 'notInLedger' | 'duplicatesInLog' | 'lost' | 'unknownAbsent'
>;

/**
 * What one consumer group processed of a bucket, left pending, had delivered again, and of
 * those, what a once guard suppressed (default 0) and what acted twice (default: the rest).
 */
export interface GroupCounts {
  readonly processed: number;
  readonly pending: number;
  readonly redelivered: number;
  readonly suppressed?: number;
}

/** The row of the bucket that starts at `start`, for one group: every layer not given counts 0. */
export function bucketRow(
  start: string,
  layers: Partial<LayerCounts>,
  group: string,
  counts: GroupCounts,
): BucketRow {
  return {
    start,
    produced: 0,
    inLog: 0,
    notInLedger: 0,
    duplicatesInLog: 0,
    lost: 0,
    unknownAbsent: 0,
    ...layers,
    processed: { [group]: counts.processed },
    pending: { [group]: counts.pending },
    redelivered: { [group]: counts.redelivered },
    suppressed: { [group]: counts.suppressed ?? 0 },
    actedTwice: { [group]: counts.redelivered - (counts.suppressed ?? 0) },
  };
}

/**
 * A stored audit report around `streams`: complete, nothing scanned or left unread, unless
 * `fields` says otherwise.
 */
export function auditReportOf(
  topic: string,
  streams: readonly LinkedFindings[],
  fields: Partial<AuditReport> = {},
): AuditReport {
  return {
    topic,
    at: '2026-11-30T12:00:00.000Z',
    complete: true,
    scanned: 0,
    scannedTotal: 0,
    untracked: 0,
    unread: 0,
    checkpoint: [],
    streams,
    topicBuckets: [],
    settled: { landed: 0, notWritten: 0 },
    ...fields,
  };
}

/**
 * The largest findings one stream can report: every list full (LIST_CAP items), figures of ten
 * digits or more, ten groups named by `group`, 25 buckets with every count set.
 */
export function fullFindings(stream: string, group: (g: number) => string): LinkedFindings {
  const perGroup = (n: number) =>
    Object.fromEntries(Array.from({ length: 10 }, (_, g) => [group(g), n]));
  const big = 9_000_000_000;
  const list = <T>(item: (i: number) => T) => Array.from({ length: LIST_CAP }, (_, i) => item(i));
  return {
    stream,
    produced: big,
    inLog: big,
    processed: perGroup(big),
    producerDuplicates: list((i) => ({
      seq: big + i,
      copies: [
        { partition: 999, offset: big * 1000, session: 'x'.repeat(36) },
        { partition: 998, offset: big * 1000 + 1, session: 'y'.repeat(36) },
      ],
      times: 2,
    })),
    consumerDuplicates: list((i) => ({
      group: group(i % 10),
      from: big + i,
      to: big + 100 + i,
      times: 2,
      reconcileEvents: [
        {
          at: '2026-11-30T12:00:00.000Z',
          partition: 999,
          status: 'REWIND',
          detail: { from: big * 1000, to: 8_000_000_000_000, recordsToReconsume: big },
        },
      ],
    })),
    lost: list((i) => ({
      from: big + i,
      to: big + i,
      acked: { partition: 999, offset: big * 1000 },
    })),
    pending: list((i) => ({ group: group(i % 10), from: big + i, to: big + 100 + i })),
    unknownLanded: list((i) => ({ seq: big + i, partition: 999, offset: big * 1000 })),
    unknownAbsent: list((i) => [big + i, big + i] as const),
    buckets: Array.from({ length: 25 }, (_, i) => ({
      start: `2026-11-30T${String(i % 24).padStart(2, '0')}:00:00.000Z`,
      produced: 9_000_000 + i,
      inLog: 9_000_000,
      notInLedger: 9_000_000,
      duplicatesInLog: 9_000_000,
      lost: 9_000_000,
      unknownAbsent: 9_000_000,
      processed: perGroup(9_000_000),
      pending: perGroup(9_000_000),
      redelivered: perGroup(9_000_000),
      suppressed: perGroup(9_000_000),
      actedTwice: perGroup(9_000_000),
    })),
    leftOff: { producerDuplicates: 9_000, consumerDuplicates: 9_000, lost: 9_000, pending: 9_000 },
  };
}
