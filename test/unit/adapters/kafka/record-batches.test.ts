import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_HOLDS,
  type PlacedRecord,
  partitionBatches,
  type RoundBatch,
  sendInRounds,
} from '../../../../functions/adapters/kafka/record-batches.js';
import { singleRecordBatchBytes } from '../../../../functions/core/publish/record-size.js';
import type { RecordOutcome } from '../../../../functions/core/shared/outcomes.js';
import { PROPERTY_SEED } from '../../../helpers/property-seed.js';

// The sizes are checked against kafkajs's own encoder: a record batch for a partition built as
// its produce request builds one (requests/produce/v3: timestamps as deltas from the smallest).

interface Encoded {
  size(): number;
}
const require = createRequire(import.meta.url);
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as {
  RecordBatch: (batch: object) => Promise<Encoded>;
};
const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (record: object) => object;

async function kafkajsBatchBytes(records: readonly PlacedRecord[]): Promise<number> {
  const first = Math.min(...records.map((r) => r.timestamp));
  const batch = await RecordBatch({
    records: records.map((r, i) =>
      Record({ ...r, offsetDelta: i, timestampDelta: r.timestamp - first }),
    ),
    firstTimestamp: first,
    maxTimestamp: Math.max(...records.map((r) => r.timestamp)),
    producerId: 1234,
    lastOffsetDelta: records.length - 1,
  });
  return batch.size();
}

const placed = (partition: number, valueBytes: number, extra: Partial<PlacedRecord> = {}) => ({
  partition,
  key: null,
  value: Buffer.alloc(valueBytes, 'v'),
  headers: {},
  timestamp: 1_700_000_000_000,
  ...extra,
});

const arbitraryRecord = (timestamps: fc.Arbitrary<number>) =>
  fc.record({
    partition: fc.integer({ min: 0, max: 3 }),
    key: fc.option(
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      { nil: null },
    ),
    value: fc.option(
      fc.integer({ min: 0, max: 20_000 }).map((n) => Buffer.alloc(n, 'x')),
      { nil: null },
    ),
    headers: fc.dictionary(
      fc.string({ minLength: 1, maxLength: 20 }),
      fc.oneof(
        fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
        fc.array(
          fc.uint8Array({ maxLength: 50 }).map((b) => Buffer.from(b)),
          { minLength: 1, maxLength: 3 },
        ),
      ),
      { maxKeys: 5 },
    ),
    timestamp: timestamps,
  });

describe('singleRecordBatchBytes', () => {
  it('is the size kafkajs encodes, across varint boundaries, nulls and repeated headers', async () => {
    const cases: PlacedRecord[] = [
      placed(0, 0),
      placed(0, 0, { value: null }),
      placed(0, 127, { key: Buffer.alloc(63) }),
      placed(0, 128, { key: Buffer.alloc(64) }),
      placed(0, 16_383),
      placed(0, 16_384, { headers: { 'tally.seq': Buffer.from('9007199254740991') } }),
      placed(0, 2_097_152, {
        headers: { trace: [Buffer.from('a'), Buffer.from('')], é: Buffer.alloc(3) },
      }),
    ];
    for (const record of cases) {
      expect(singleRecordBatchBytes(record)).toBe(await kafkajsBatchBytes([record]));
    }
  });
});

describe('partitionBatches', () => {
  it('groups by partition in order of first appearance, keeping record order', () => {
    const records = [placed(2, 10), placed(0, 10), placed(2, 10), placed(1, 10), placed(0, 10)];

    expect(partitionBatches(records, 1_000_000)).toEqual([
      { partition: 2, batches: [[0, 2]] },
      { partition: 0, batches: [[1, 4]] },
      { partition: 1, batches: [[3]] },
    ]);
  });

  it("cuts 1,000 stamped 1 KB records (1.1 MB) into two batches under the broker's default", async () => {
    const stamped = (i: number) =>
      placed(0, 1024, {
        headers: {
          'tally.stream': Buffer.from('orders-stream'),
          'tally.seq': Buffer.from(String(100_000 + i)),
          'tally.session': Buffer.from('s-AAAAAAAAAAAA'),
        },
      });
    const records = Array.from({ length: 1000 }, (_, i) => stamped(i));

    const [only, ...others] = partitionBatches(records, 1_048_588);

    expect(others).toEqual([]);
    expect(only?.batches).toHaveLength(2);
    for (const batch of only?.batches ?? []) {
      const size = await kafkajsBatchBytes(batch.map((i) => records[i] as PlacedRecord));
      expect(size).toBeLessThanOrEqual(1_048_588);
    }
  });

  it('puts a record that fits no batch in a batch of its own, between its neighbours', () => {
    const records = [placed(0, 600), placed(0, 600), placed(0, 5000), placed(0, 600)];

    expect(partitionBatches(records, 1500)).toEqual([
      { partition: 0, batches: [[0, 1], [2], [3]] },
    ]);
  });

  it('never makes a batch kafkajs would encode over the limit, and fills each when timestamps agree', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(arbitraryRecord(fc.constant(1_700_000_000_000)), { maxLength: 60 }),
        fc.integer({ min: 200, max: 100_000 }),
        async (records, maxBytes) => {
          for (const { partition, batches } of partitionBatches(records, maxBytes)) {
            const mine = records.flatMap((r, i) => (r.partition === partition ? [i] : []));
            expect(batches.flat()).toEqual(mine);
            for (const [n, batch] of batches.entries()) {
              const size = await kafkajsBatchBytes(batch.map((i) => records[i] as PlacedRecord));
              if (batch.length > 1) expect(size).toBeLessThanOrEqual(maxBytes);
              const next = batches[n + 1]?.[0];
              if (next === undefined) continue;
              const grown = [...batch, next].map((i) => records[i] as PlacedRecord);
              expect(await kafkajsBatchBytes(grown)).toBeGreaterThan(maxBytes);
            }
          }
        },
      ),
      { numRuns: 200, seed: PROPERTY_SEED },
    );
  });

  it('stays under the limit with timestamps far apart (each delta is bounded by their spread)', async () => {
    const spread = fc.oneof(
      fc.integer({ min: 1_700_000_000_000, max: 1_700_000_000_100 }),
      fc.integer({ min: 0, max: 4_000_000_000_000 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(arbitraryRecord(spread), { maxLength: 60 }),
        fc.integer({ min: 200, max: 100_000 }),
        async (records, maxBytes) => {
          for (const { batches } of partitionBatches(records, maxBytes)) {
            for (const batch of batches) {
              if (batch.length === 1) continue;
              const size = await kafkajsBatchBytes(batch.map((i) => records[i] as PlacedRecord));
              expect(size).toBeLessThanOrEqual(maxBytes);
            }
          }
        },
      ),
      { numRuns: 200, seed: PROPERTY_SEED },
    );
  });
});

describe('sendInRounds', () => {
  const plan = [
    { partition: 2, batches: [[0, 1], [4], [6]] },
    { partition: 0, batches: [[2], [5]] },
    { partition: 1, batches: [[3]] },
  ];
  const ack = (i: number): RecordOutcome => ({ status: 'ACKED', partition: 0, offset: String(i) });
  const acked = (batches: RoundBatch[]) => batches.map((b) => b.indexes.map(ack));

  it("sends each partition's next batch together, round after round, answering every record", async () => {
    const rounds: number[][] = [];
    const outcomes = await sendInRounds(
      plan,
      async (batches) => {
        rounds.push(batches.flatMap((b) => [...b.indexes]));
        return acked(batches);
      },
      () => undefined,
    );

    expect(rounds).toEqual([[0, 1, 2, 3], [4, 5], [6]]);
    expect(outcomes).toEqual([0, 1, 2, 3, 4, 5, 6].map(ack));
  });

  it('starts no round once halted: what was not sent is NOT_SENT with the reason', async () => {
    const rounds: number[][] = [];
    let halt: string | undefined;
    const outcomes = await sendInRounds(
      plan,
      async (batches) => {
        rounds.push(batches.flatMap((b) => [...b.indexes]));
        halt = 'the request deadline passed';
        return acked(batches);
      },
      () => halt,
    );

    expect(rounds).toEqual([[0, 1, 2, 3]]);
    expect(outcomes.slice(0, 4)).toEqual([0, 1, 2, 3].map(ack));
    expect(outcomes.slice(4)).toEqual(
      [4, 5, 6].map(() => ({
        status: 'NOT_SENT',
        message: 'not sent: the request deadline passed',
      })),
    );
  });

  it('sends a held batch again next round, before its partition goes on', async () => {
    const rounds: Array<Array<[number, number[]]>> = [];
    const outcomes = await sendInRounds(
      plan,
      async (batches) => {
        rounds.push(batches.map((b) => [b.partition, [...b.indexes]]));
        return batches.map((b) =>
          rounds.length === 1 && b.partition === 0
            ? { held: 'partition 0 moved', mayHaveGone: true }
            : b.indexes.map(ack),
        );
      },
      () => undefined,
    );

    expect(rounds).toEqual([
      [
        [2, [0, 1]],
        [0, [2]],
        [1, [3]],
      ],
      [
        [2, [4]],
        [0, [2]],
      ],
      [
        [2, [6]],
        [0, [5]],
      ],
    ]);
    expect(outcomes).toEqual([0, 1, 2, 3, 4, 5, 6].map(ack));
  });

  it('a held batch that may have gone is UNKNOWN when halted; one never sent is NOT_SENT', async () => {
    let halt: string | undefined;
    const outcomes = await sendInRounds(
      plan,
      async (batches) => {
        halt = 'the request deadline passed';
        return batches.map((b) =>
          b.partition === 1
            ? b.indexes.map(ack)
            : { held: 'moved', mayHaveGone: b.partition === 2 },
        );
      },
      () => halt,
    );

    expect(outcomes[3]).toEqual(ack(3));
    for (const i of [0, 1]) {
      expect(outcomes[i]).toEqual({
        status: 'UNKNOWN',
        message: 'sent, then held unanswered: the request deadline passed',
      });
    }
    for (const i of [2, 4, 5, 6]) expect(outcomes[i]?.status).toBe('NOT_SENT');
  });

  it(`gives a batch up after ${MAX_HOLDS} holds`, async () => {
    let sends = 0;
    const outcomes = await sendInRounds(
      [{ partition: 0, batches: [[0], [1]] }],
      async (batches) => {
        sends++;
        return batches.map(() => ({ held: 'moved again', mayHaveGone: false }));
      },
      () => undefined,
    );

    expect(sends).toBe(MAX_HOLDS);
    expect(outcomes).toEqual(
      [0, 1].map(() => ({
        status: 'NOT_SENT',
        message: `not sent: held ${MAX_HOLDS} times (moved again)`,
      })),
    );
  });
});
