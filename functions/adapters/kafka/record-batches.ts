import {
  RECORD_BATCH_OVERHEAD,
  recordBodyBytes,
  recordBytes,
  type SizedRecord,
  varintBytes,
} from '../../core/record-size.js';

// kafkajs writes all records of one send for a partition as one record batch, and the broker
// refuses a batch over the topic's max.message.bytes whole (MESSAGE_TOO_LARGE). So a request's
// records are grouped by partition and cut, in order, into batches that fit.

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

  add(index: number, body: number, timestamp: number): void {
    this.bytes = this.with(body, timestamp);
    this.indexes.push(index);
    this.bodies.push(body);
    this.low = Math.min(this.low, timestamp);
    this.high = Math.max(this.high, timestamp);
  }

  private spreadBytes(): number {
    return varintBytes(this.high - this.low);
  }
}

/** Partitions in order of their first record, each cut into batches of at most maxBytes. */
export function partitionBatches(
  records: readonly PlacedRecord[],
  maxBytes: number,
): PartitionBatches[] {
  const open = new Map<number, BatchSize>();
  const done = new Map<number, number[][]>();
  records.forEach((record, index) => {
    const body = recordBodyBytes(record);
    let batch = open.get(record.partition);
    const full = batch && batch.with(body, record.timestamp) > maxBytes;
    if (batch === undefined || full) {
      if (batch) done.get(record.partition)?.push(batch.indexes);
      else done.set(record.partition, []);
      batch = new BatchSize();
      open.set(record.partition, batch);
    }
    batch.add(index, body, record.timestamp);
  });
  return [...done].map(([partition, batches]) => ({
    partition,
    batches: [...batches, (open.get(partition) as BatchSize).indexes],
  }));
}
