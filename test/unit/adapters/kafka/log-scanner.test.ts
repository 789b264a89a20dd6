import { EventEmitter } from 'node:events';
import type { Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createLogScanner } from '../../../../functions/adapters/kafka/log-scanner.js';
import type { ScannedRecord } from '../../../../functions/core/audit/ports.js';
import { DependencyUnavailableError } from '../../../../functions/core/shared/errors.js';

// The scanner's consumer, faked where kafkajs misbehaves under a broker fault: the group join
// crashing (with or without a restart) and `seek` refusing because the group is not joined.
// The real-broker behaviour is in test/integration/audit.test.ts and faults-broker-restart.

type Batch = { partition: number; offsets: number[] };

interface Script {
  /** After run() resolves: what the consumer does. */
  readonly afterRun: (consumer: FakeConsumer) => void;
}

class FakeConsumer extends EventEmitter {
  readonly events = { GROUP_JOIN: 'group-join', CRASH: 'crash' } as const;
  joined = false;
  readonly seeks: Array<{ partition: number; offset: string }> = [];
  refusedSeeks = 0;
  eachBatch: ((payload: { batch: unknown }) => Promise<void>) | undefined;
  disconnected = false;

  async connect() {}
  async subscribe() {}
  async disconnect() {
    this.disconnected = true;
  }
  pause() {}
  seek(at: { partition: number; offset: string }) {
    if (!this.joined) {
      this.refusedSeeks++;
      throw Object.assign(new Error('Consumer group was not initialized'), {
        name: 'KafkaJSNonRetriableError',
      });
    }
    this.seeks.push({ partition: at.partition, offset: at.offset });
  }
  async run(options: { eachBatch: (payload: { batch: unknown }) => Promise<void> }) {
    this.eachBatch = options.eachBatch;
  }
  join() {
    this.joined = true;
    this.emit(this.events.GROUP_JOIN, { payload: {} });
  }
  crash(restart: boolean) {
    this.joined = false;
    const error = Object.assign(new Error('The group is rebalancing'), {
      name: 'KafkaJSProtocolError',
      type: 'REBALANCE_IN_PROGRESS',
    });
    this.emit(this.events.CRASH, { payload: { error, groupId: 'g', restart } });
  }
  async deliver({ partition, offsets }: Batch) {
    await this.eachBatch?.({
      batch: {
        partition,
        messages: offsets.map((offset) => ({
          offset: String(offset),
          timestamp: '0',
          headers: { 'tally.seq': String(offset) },
        })),
        lastOffset: () => String(offsets[offsets.length - 1]),
      },
    });
  }
}

function fakeKafka(script: Script) {
  const consumer = new FakeConsumer();
  const deletedGroups: string[] = [];
  // run() resolves, then the script goes on in the next turns.
  const run = consumer.run.bind(consumer);
  consumer.run = async (options) => {
    await run(options);
    setImmediate(() => script.afterRun(consumer));
  };
  const kafka = {
    consumer: () => consumer,
    admin: () => ({
      connect: async () => {},
      disconnect: async () => {},
      fetchTopicMetadata: async () => ({ topics: [] }),
      fetchTopicOffsets: async () => [{ partition: 0, low: '0', high: '4', offset: '4' }],
      deleteGroups: async (ids: string[]) => {
        deletedGroups.push(...ids);
      },
    }),
  } as unknown as Kafka;
  return { kafka, consumer, deletedGroups };
}

const scanFrom = (kafka: Kafka, from: number, records: ScannedRecord[]) =>
  createLogScanner(kafka).scan(
    'orders',
    { from: new Map([[0, from]]), deadlineAt: Date.now() + 5000 },
    (record) => records.push(record),
  );

describe('log scanner under a broker fault', () => {
  it('a crash kafkajs will not restart from fails the read with a retriable 503, not a KafkaJS error', async () => {
    const { kafka, consumer, deletedGroups } = fakeKafka({
      afterRun: (c) => c.crash(false),
    });
    const error = await scanFrom(kafka, 0, []).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyUnavailableError);
    expect((error as Error).message).toBe(
      "Kafka stopped the audit's read of orders (KafkaJSProtocolError); nothing was judged",
    );
    expect(consumer.disconnected).toBe(true);
    expect(deletedGroups).toHaveLength(1);
  });

  it('a seek refused before the group is joined is made on the join; records before the start are skipped', async () => {
    const records: ScannedRecord[] = [];
    const { kafka, consumer } = fakeKafka({
      afterRun: (c) => {
        // Crashed and restarting: not joined when run() resolved, so the seek is refused …
        c.join();
        // … the restarted consumer joins again (seeks are forgotten) and reads from 0.
        c.crash(true);
        c.join();
        void c.deliver({ partition: 0, offsets: [0, 1, 2, 3] });
      },
    });
    const result = await scanFrom(kafka, 2, records);
    expect(consumer.refusedSeeks).toBe(1);
    expect(consumer.seeks).toEqual([
      { partition: 0, offset: '2' },
      { partition: 0, offset: '2' },
    ]);
    expect(records.map((r) => r.offset)).toEqual([2, 3]);
    expect(result).toMatchObject({ scanned: 2, complete: true });
    expect(result.next.get(0)).toBe(4);
  });
});

describe('log scanner waiting for its caller (`after`)', () => {
  it('hands over no record before `after` settles, then every one', async () => {
    const records: ScannedRecord[] = [];
    let settle: () => void = () => {};
    const after = new Promise<void>((resolve) => {
      settle = resolve;
    });
    let seenBefore = -1;
    const { kafka } = fakeKafka({
      afterRun: (c) => {
        c.join();
        const delivered = c.deliver({ partition: 0, offsets: [0, 1, 2, 3] });
        // The batch is waiting on `after`: nothing counted yet.
        setImmediate(() => {
          seenBefore = records.length;
          settle();
        });
        void delivered;
      },
    });
    const result = await createLogScanner(kafka).scan(
      'orders',
      { deadlineAt: Date.now() + 5000, after },
      (record) => records.push(record),
    );
    expect(seenBefore).toBe(0);
    expect(records.map((r) => r.offset)).toEqual([0, 1, 2, 3]);
    expect(result).toMatchObject({ scanned: 4, complete: true });
  });

  it('stops without a record when `after` fails, leaving the error to its holder', async () => {
    const records: ScannedRecord[] = [];
    const after = Promise.reject(new Error('the ledger did not answer'));
    after.catch(() => {});
    const { kafka, consumer } = fakeKafka({
      afterRun: (c) => {
        c.join();
        void c.deliver({ partition: 0, offsets: [0, 1, 2, 3] });
      },
    });
    const result = await createLogScanner(kafka).scan(
      'orders',
      { deadlineAt: Date.now() + 5000, after },
      (record) => records.push(record),
    );
    expect(records).toEqual([]);
    expect(result).toMatchObject({ scanned: 0, complete: false });
    expect(result.next.get(0)).toBe(0);
    expect(consumer.disconnected).toBe(true);
  });
});
