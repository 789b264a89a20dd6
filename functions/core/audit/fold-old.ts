import { CheckpointTooLargeError, KEEP_PLACED, REPORT_ROWS } from './retention.js';
import type { StreamAudit } from './stream-audit.js';
import type { CheckpointJson, TopicLog } from './topic-log.js';

// The last phase of an audit run: fold what is older than the retention horizon into totals and
// save the checkpoint, which then stays bounded by the horizon's findings. A checkpoint that
// still would not fit a DynamoDB item is folded whole and saved again, and the report says so:
// an audit never fails the same way run after run.

export interface FoldOptions {
  /** Buckets that ended by this time (ms) are folded. */
  readonly cutoff: number;
  readonly bucketMs: number;
  /** The log was read to its end, so absence is final and may be folded. */
  readonly complete: boolean;
}

/** Folds old detail; keeps only placements worth carrying. Mutates `state` and the audits. */
export function foldOld(
  state: TopicLog,
  audits: ReadonlyMap<string, StreamAudit>,
  { cutoff, bucketMs, complete }: FoldOptions,
): void {
  for (const [stream, audit] of audits) {
    const log = state.stream(stream);
    // The ledger's time places produced seqs: the log's bucket is kept only for the others.
    log.forgetProduced(audit.produced);
    if (complete) audit.fold(cutoff, true);
    log.prunePlacements(KEEP_PLACED);
  }
  if (complete) state.foldBuckets(cutoff, bucketMs);
  state.counted.foldUnlisted(state.topicBuckets.keys(), REPORT_ROWS, bucketMs);
}

/**
 * Saves the checkpoint; when the store finds it too large, folds everything read so far and
 * saves again. Resolves with why it had to (for the report), or undefined.
 */
export async function saveBounded(
  save: (state: CheckpointJson) => Promise<void>,
  state: TopicLog,
  audits: ReadonlyMap<string, StreamAudit>,
  { bucketMs, complete }: Omit<FoldOptions, 'cutoff'>,
): Promise<string | undefined> {
  try {
    await save(state.toJSON());
    return undefined;
  } catch (error) {
    if (!(error instanceof CheckpointTooLargeError)) throw error;
    for (const [stream, audit] of audits) {
      audit.fold(Number.POSITIVE_INFINITY, complete);
      state.stream(stream).prunePlacements(0);
    }
    state.foldBuckets(Number.POSITIVE_INFINITY, bucketMs);
    await save(state.toJSON());
    return `${error.message}: every detail read so far was folded into totals to save it`;
  }
}
