import type { BucketRow } from '../../functions/core/audit/stream-audit.js';

// Expected audit findings for the unit tests of the stream audit and of the pages that render
// them: a stream that found nothing, and one time bucket's row, spelt out in full.

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
