import {
  RECORD_BATCH_OVERHEAD,
  recordBodyBytes,
  recordBytes,
  type SizedRecord,
  varintBytes,
} from '../../core/publish/record-size.js';
import type { RecordOutcome } from '../../core/shared/outcomes.js';

// kafkajs writes all records of one send for a partition as one record batch, and the broker
// refuses a batch over the topic's max.message.bytes whole (MESSAGE_TOO_LARGE). So a request's
// records are grouped by partition, cut in order into batches that fit, and sent in rounds.

export interface PlacedRecord extends SizedRecord {
  readonly partition: number;
  readonly timestamp: number;
}

export interface PartitionBatches {
  readonly partition: number;
  /** Indexes into the records, in their order; every batch fits unless it holds one record. */
  readonly batches: readonly (readonly number[])[];
}

/**
 * An upper bound of a batch's encoded size. kafkajs writes each record's timestamp as a delta
 * from the batch's smallest, so the spread of timestamps bounds every delta's varint.
 */
class BatchSize {
  readonly indexes: number[] = [];
  private readonly bodies: number[] = [];
  private low = Number.POSITIVE_INFINITY;
  private high = Number.NEGATIVE_INFINITY;
  private bytes = RECORD_BATCH_OVERHEAD;

  /** The batch's size with this record added. */
  with(body: number, timestamp: number): number {
    const spread = varintBytes(Math.max(this.high, timestamp) - Math.min(this.low, timestamp));
    if (this.bodies.length > 0 && spread === this.spreadBytes()) {
      return this.bytes + recordBytes(body, this.bodies.length, spread);
    }
    // The first record, or a wider spread of timestamps: every record's delta may grow.
    return [...this.bodies, body].reduce(
      (sum, each, offset) => sum + recordBytes(each, offset, spread),
      RECORD_BATCH_OVERHEAD,
    );
  }

  /** Adds the record; `size`: what `with` said of it, when the caller has asked. */
  add(index: number, body: number, timestamp: number, size = this.with(body, timestamp)): void {
    this.bytes = size;
    this.indexes.push(index);
    this.bodies.push(body);
    this.low = Math.min(this.low, timestamp);
    this.high = Math.max(this.high, timestamp);
  }

  private spreadBytes(): number {
    return varintBytes(this.high - this.low);
  }
}

/**
 * Partitions in order of their first record, each cut into batches of at most maxBytes. `bodies`:
 * each record's `recordBodyBytes`, when the caller has them (else they are computed here).
 */
export function partitionBatches(
  records: readonly PlacedRecord[],
  maxBytes: number,
  bodies?: readonly number[],
): PartitionBatches[] {
  const open = new Map<number, BatchSize>();
  const done = new Map<number, number[][]>();
  records.forEach((record, index) => {
    const body = bodies?.[index] ?? recordBodyBytes(record);
    let batch = open.get(record.partition);
    // Sized once: the size with this record is what the batch holds once it is added.
    const size = batch?.with(body, record.timestamp);
    if (batch === undefined || (size as number) > maxBytes) {
      if (batch) done.get(record.partition)?.push(batch.indexes);
      else done.set(record.partition, []);
      batch = new BatchSize();
      open.set(record.partition, batch);
      batch.add(index, body, record.timestamp);
    } else batch.add(index, body, record.timestamp, size);
  });
  return [...done].map(([partition, batches]) => ({
    partition,
    batches: [...batches, (open.get(partition) as BatchSize).indexes],
  }));
}

/** One partition's next batch in a round. */
export interface RoundBatch {
  readonly partition: number;
  readonly indexes: readonly number[];
}

/**
 * A batch kafkajs did not send this round because its partition's leader was not the broker its
 * request was planned for (`leader-guard.ts`). Its sequence numbers are where they were before
 * (nothing was sent, or what was sent failed and was rolled back): it is sent again next round.
 */
export interface HeldBatch {
  readonly held: string;
  /** An earlier attempt of it was made: it may be in the log. */
  readonly mayHaveGone: boolean;
}

export type BatchResult = readonly RecordOutcome[] | HeldBatch;

/** A batch held this many times in one request (leadership moving on and on) is given up. */
export const MAX_HOLDS = 8;

/**
 * Sends the batches in rounds: a round holds the next batch of every partition still going, and
 * the next round starts when all of it is answered. So a request never has two sends queued for
 * one broker: sends queued inside kafkajs (one request per broker at a time) would still go out
 * after the deadline, from a retired session, as writes the audit may already have judged absent.
 * After a batch that was not acknowledged its partition's later batches stay NOT_SENT: written
 * now, they would sit in the log ahead of that batch's records, which a retry with the same
 * Idempotency-Key sends again. A held batch is sent again next round (at most MAX_HOLDS times).
 * `halted` says why no round may start; a held batch that may have gone is then UNKNOWN.
 */
export async function sendInRounds(
  plan: readonly PartitionBatches[],
  sendRound: (batches: RoundBatch[]) => Promise<readonly BatchResult[]>,
  halted: () => string | undefined,
): Promise<RecordOutcome[]> {
  const outcomes: RecordOutcome[] = [];
  const next = plan.map(() => 0); // each partition's next batch
  const holds = plan.map(() => 0); // how often its next batch was held
  const gone = plan.map(() => false); // its next batch may be in the log
  const stopped = new Map<number, string>(); // a partition's place in the plan → why
  const unknown = (k: number, why: string) => {
    for (const i of plan[k]?.batches[next[k] as number] ?? []) {
      outcomes[i] = { status: 'UNKNOWN', message: `sent, then held unanswered: ${why}` };
    }
    next[k] = (next[k] as number) + 1;
    gone[k] = false;
  };
  for (;;) {
    const round = plan.flatMap((p, k) =>
      !stopped.has(k) && (next[k] as number) < p.batches.length ? [k] : [],
    );
    if (round.length === 0) break;
    const halt = halted();
    if (halt !== undefined) {
      for (const k of round) {
        stopped.set(k, halt);
        if (gone[k]) unknown(k, halt);
      }
      break;
    }
    const batches = round.map((k) => ({
      partition: plan[k]?.partition as number,
      indexes: plan[k]?.batches[next[k] as number] ?? [],
    }));
    const results = await sendRound(batches);
    round.forEach((k, n) => {
      const result = results[n] as BatchResult;
      if ('held' in result) {
        gone[k] ||= result.mayHaveGone;
        holds[k] = (holds[k] as number) + 1;
        if ((holds[k] as number) < MAX_HOLDS) return;
        const why = `held ${MAX_HOLDS} times (${result.held})`;
        stopped.set(k, why);
        if (gone[k]) unknown(k, why);
        return;
      }
      const indexes = batches[n]?.indexes ?? [];
      let failed: RecordOutcome | undefined;
      indexes.forEach((i, j) => {
        const outcome = result[j] as RecordOutcome;
        outcomes[i] = outcome;
        if (failed === undefined && outcome.status !== 'ACKED') failed = outcome;
      });
      next[k] = (next[k] as number) + 1;
      holds[k] = 0;
      gone[k] = false;
      if (failed === undefined) return;
      stopped.set(
        k,
        `an earlier record batch of partition ${plan[k]?.partition} was not acknowledged (${failed.status}); later ones would overtake it`,
      );
    });
  }
  for (const [k, why] of stopped) {
    for (const i of plan[k]?.batches.slice(next[k]).flat() ?? []) {
      outcomes[i] = { status: 'NOT_SENT', message: `not sent: ${why}` };
    }
  }
  return outcomes;
}
