import { type Admin, type Kafka, Partitioners, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoDbTxnIdPool } from '../../functions/adapters/dynamodb/txn-id-pool.js';
import { createTransactionalProducer } from '../../functions/adapters/kafka/transactional-producer.js';
import {
  kafkaErrorType,
  TransactionNotCommittedError,
} from '../../functions/adapters/kafka/txn-errors.js';
import type { OutgoingRecord } from '../../functions/core/publish/ports.js';
import { createTxnIdLeaser, TxnIdPoolExhausted } from '../../functions/core/publish/txn-id-pool.js';
import { Deadline } from '../../functions/core/shared/deadline.js';
import { testKafka } from '../helpers/kafka.js';
import { localTablesForFile } from '../helpers/local-tables.js';
import { createTopicsEverywhere } from '../helpers/topics.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 33: the transactional producer adapter on the real broker. What a read_committed consumer
// sees is read back after each case: a committed marker is written to every partition last, and
// the consumer reads until it has every marker (an open transaction left behind would hold the
// markers back, and the read would fail on its bound).

const PARTITIONS = [0, 1, 2];
const MAX_MESSAGE_BYTES = 2048;
const { documents, table } = localTablesForFile('txn-producer');
let kafka: Kafka;
let admin: Admin;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  kafka = testKafka('tally-test-txn');
  admin = kafka.admin();
  await admin.connect();
});
afterAll(async () => {
  for (const close of closers) await close().catch(() => {});
  await admin.disconnect();
});

async function newTopic(): Promise<string> {
  const topic = uniqueName('txn');
  await createTopicsEverywhere(admin, [
    {
      topic,
      numPartitions: PARTITIONS.length,
      configEntries: [{ name: 'max.message.bytes', value: String(MAX_MESSAGE_BYTES) }],
    },
  ]);
  return topic;
}

const soon = () => new Deadline(Date.now() + 20_000);
const record = (partition: number, value: string): OutgoingRecord => ({
  partition,
  key: null,
  value: Buffer.from(value),
  headers: {},
  timestamp: Date.now(),
});

function producerOf(txnId: string) {
  const producer = createTransactionalProducer(kafka, {
    txnId,
    transactionTimeoutMs: 30_000,
    requestTimeoutMs: 10_000,
    log: () => {},
  });
  closers.push(() => producer.close());
  return producer;
}

/** A bare kafkajs transactional producer: a container frozen with its transaction open. */
async function rawProducer(txnId: string): Promise<Producer> {
  const producer = kafka.producer({
    transactionalId: txnId,
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  closers.push(() => producer.disconnect());
  await producer.connect();
  return producer;
}

/** Every value of `topic` a consumer reading `isolation` sees, by partition, in offset order. */
async function valuesSeen(
  topic: string,
  isolation: 'read_committed' | 'read_uncommitted',
): Promise<Map<number, string[]>> {
  const marker = `marker-${uniqueName('m')}`;
  const markers = producerOf(uniqueName('marker'));
  await markers.send(
    topic,
    PARTITIONS.map((p) => record(p, marker)),
    soon(),
  );
  const consumer = kafka.consumer({
    groupId: uniqueName('reader'),
    readUncommitted: isolation === 'read_uncommitted',
    maxWaitTimeInMs: 100,
  });
  await consumer.connect();
  const seen = new Map<number, string[]>(PARTITIONS.map((p) => [p, []]));
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const done = new Set<number>();
    await new Promise<void>((resolve, reject) => {
      const bound = setTimeout(
        () => reject(new Error(`${isolation}: markers of ${[...done]} only after 45 s`)),
        45_000,
      );
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            const value = message.value?.toString() ?? '';
            if (value === marker) done.add(partition);
            else if (!value.startsWith('marker-')) seen.get(partition)?.push(value);
            if (done.size === PARTITIONS.length) {
              clearTimeout(bound);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

const all = (seen: Map<number, string[]>) => [...seen.values()].flat().sort();

describe('transactional producer on the real broker', () => {
  it('commits a request in one transaction: each record visible once to read_committed, at its offset', async () => {
    const topic = await newTopic();
    const producer = producerOf(uniqueName('commit'));
    const sent = await producer.send(
      topic,
      [record(0, 'a'), record(1, 'b'), record(2, 'c'), record(0, 'd')],
      soon(),
    );
    expect(sent.incarnation).toBe(1);
    expect(sent.offsets.map((o) => o.partition)).toEqual([0, 1, 2, 0]);
    expect(Number(sent.offsets[3]?.offset)).toBe(Number(sent.offsets[0]?.offset) + 1);
    const seen = await valuesSeen(topic, 'read_committed');
    expect(seen.get(0)).toEqual(['a', 'd']);
    expect(all(seen)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('aborts when a send fails: what was written stays invisible to read_committed', async () => {
    const topic = await newTopic();
    const producer = producerOf(uniqueName('abort'));
    const tooLarge = 'x'.repeat(MAX_MESSAGE_BYTES * 2);
    const failed = producer.send(topic, [record(0, 'written'), record(1, tooLarge)], soon());
    await expect(failed).rejects.toBeInstanceOf(TransactionNotCommittedError);
    await expect(failed).rejects.toMatchObject({ reason: 'SEND_FAILED' });
    // The producer was retired; the next request goes out on a new one, committed.
    const next = await producer.send(topic, [record(2, 'after')], soon());
    expect(next.incarnation).toBe(2);
    expect(all(await valuesSeen(topic, 'read_committed'))).toEqual(['after']);
    // The aborted record is in the log all the same: a read_uncommitted consumer sees it.
    expect((await valuesSeen(topic, 'read_uncommitted')).get(0)).toEqual(['written']);
  });

  it('a second producer of the id fences the first: its commit fails INVALID_PRODUCER_EPOCH, its record never visible', async () => {
    const topic = await newTopic();
    const txnId = uniqueName('fence');
    const zombie = await rawProducer(txnId);
    const open = await zombie.transaction();
    await open.send({ topic, messages: [{ partition: 0, value: 'zombie' }] });
    const successor = producerOf(txnId);
    await successor.fence(soon());
    const commit = open.commit();
    await expect(commit).rejects.toThrow();
    expect(kafkaErrorType(await commit.catch((e: unknown) => e))).toBe('INVALID_PRODUCER_EPOCH');
    // kafkajs's defect: the failed EndTxn left its state machine in COMMITTING for good.
    await expect(zombie.transaction()).rejects.toThrow(/Invalid transition|state/);
    await successor.send(topic, [record(0, 'successor')], soon());
    expect((await valuesSeen(topic, 'read_committed')).get(0)).toEqual(['successor']);
  });

  it('two adapters sharing one id live fence each other on every turn (why ids are leased)', async () => {
    const topic = await newTopic();
    const txnId = uniqueName('shared');
    const a = producerOf(txnId);
    const b = producerOf(txnId);
    await a.send(topic, [record(0, 'a1')], soon());
    await b.fence(soon());
    await expect(a.send(topic, [record(0, 'a2')], soon())).rejects.toMatchObject({
      name: 'TransactionNotCommittedError',
      reason: 'FENCED',
    });
    await a.send(topic, [record(0, 'a3')], soon()); // a new producer of a: b is fenced now
    await expect(b.send(topic, [record(0, 'b1')], soon())).rejects.toMatchObject({
      reason: 'FENCED',
    });
    expect((await valuesSeen(topic, 'read_committed')).get(0)).toEqual(['a1', 'a3']);
  });

  it('a container taking over an expired lease fences the zombie that held it', async () => {
    const topic = await newTopic();
    const pool = uniqueName('pool');
    let clock = Date.now();
    const leaserFor = (holder: string) =>
      createTxnIdLeaser({
        store: createDynamoDbTxnIdPool(documents, { tableName: table('TxnIdsTable'), pool }),
        idPrefix: pool,
        poolSize: 1,
        holder,
        leaseMs: 60_000,
        skewMs: 1000,
        maxRequestMs: 30_000,
        now: () => clock,
      });
    const zombieLeaser = leaserFor('zombie');
    const first = await zombieLeaser.forRequest();
    expect(first.mustFence).toBe(false);
    // The zombie's request is mid-transaction when its container freezes past the lease.
    const zombie = await rawProducer(first.lease.txnId);
    const open = await zombie.transaction();
    await open.send({ topic, messages: [{ partition: 1, value: 'zombie' }] });
    clock += 60_001;
    const taken = await leaserFor('successor').forRequest();
    expect(taken).toMatchObject({ mustFence: true, lease: { txnId: first.lease.txnId } });
    const successor = producerOf(taken.lease.txnId);
    await successor.fence(soon()); // before anything is sent under the id
    // The zombie thaws: its commit is refused, and its container finds no id to lease.
    expect(kafkaErrorType(await open.commit().catch((e: unknown) => e))).toBe(
      'INVALID_PRODUCER_EPOCH',
    );
    await successor.send(topic, [record(1, 'successor')], soon());
    await expect(zombieLeaser.forRequest()).rejects.toBeInstanceOf(TxnIdPoolExhausted);
    expect((await valuesSeen(topic, 'read_committed')).get(1)).toEqual(['successor']);
  });

  it('back-to-back transactions: every one committed (latency printed, a bench figure)', async () => {
    const topic = await newTopic();
    const producer = producerOf(uniqueName('b2b'));
    const times: number[] = [];
    for (let i = 0; i < 21; i++) {
      const started = performance.now();
      await producer.send(topic, [record(i % 3, `r${i}`)], soon());
      times.push(performance.now() - started);
    }
    const [, ...warm] = times; // the first one initialises the id
    warm.sort((x, y) => x - y);
    const at = (q: number) => warm[Math.min(warm.length - 1, Math.floor(q * warm.length))];
    process.stderr.write(
      `txn back-to-back (adapter, 20 warm): p50 ${at(0.5)?.toFixed(1)} ms, p90 ${at(0.9)?.toFixed(1)} ms, first ${times[0]?.toFixed(1)} ms\n`,
    );
    expect(all(await valuesSeen(topic, 'read_committed'))).toHaveLength(21);
  });
});
