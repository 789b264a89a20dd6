import { createRequire } from 'node:module';
import type { Kafka, ProducerConfig } from 'kafkajs';
import { KafkaJSConnectionError, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createRecordSender } from '../../../../functions/adapters/kafka/record-sender.js';
import type { OutgoingRecord } from '../../../../functions/core/publish/ports.js';
import { Deadline } from '../../../../functions/core/shared/deadline.js';

// The record sender over kafkajs 2.2.4's own producer (its sendMessages, retrier, sequence
// numbers and per-broker locks), with only the cluster faked: brokers are functions the test
// scripts, and each partition's log is shared by its replicas and does what a broker does with an
// idempotent producer's batch: append it at the sequence number it expects, answer a batch it
// already holds (same producer, same sequence numbers) with the offset it has, refuse a gap.
// This replays issue 16's seed 1 deterministically: a send spanning two brokers, one of which
// wrote its partition while the other failed, and that partition's leadership moved in between.

const require = createRequire(import.meta.url);
const createProducer = require('kafkajs/src/producer/index.js') as (options: object) => unknown;
const { createLogger } = require('kafkajs/src/loggers/index.js') as {
  createLogger: (options: object) => unknown;
};

const TOPIC = 'orders';

interface Stored {
  readonly producerId: number;
  readonly firstSequence: number;
  readonly count: number;
  readonly baseOffset: number;
  readonly seqs: readonly string[];
}

interface Produce {
  readonly broker: number;
  readonly partitions: ReadonlyArray<{ partition: number; firstSequence: number; count: number }>;
}

type Behaviour = (call: number, write: () => object) => Promise<object>;

class FakeCluster {
  /** Each partition's leader, as the cluster has it; kafkajs sees it after a metadata refresh. */
  readonly truth = new Map<number, number>();
  private seen: Array<{ partitionId: number; leader: number }> = [];
  readonly logs = new Map<number, Stored[]>();
  readonly produces: Produce[] = [];
  readonly behaviour = new Map<number, Behaviour>();
  private readonly calls = new Map<number, number>();
  connected = false;

  constructor(leaders: Record<number, number>) {
    for (const [partition, leader] of Object.entries(leaders)) {
      this.truth.set(Number(partition), leader);
      this.logs.set(Number(partition), []);
    }
  }

  async connect() {
    this.connected = true;
  }
  async disconnect() {
    this.connected = false;
  }
  isConnected() {
    return this.connected;
  }
  async refreshMetadata() {
    this.seen = [...this.truth].map(([partitionId, leader]) => ({ partitionId, leader }));
  }
  async refreshMetadataIfNecessary() {
    if (this.seen.length === 0) await this.refreshMetadata();
  }
  async addMultipleTargetTopics() {}
  removeBroker() {}
  findTopicPartitionMetadata() {
    return this.seen;
  }
  findLeaderForPartitions(_topic: string, partitions: string[]) {
    const result: Record<number, number[]> = {};
    for (const id of partitions) {
      const leader = this.seen.find((p) => p.partitionId === Number(id))?.leader as number;
      result[leader] = [...(result[leader] ?? []), Number(id)];
    }
    return result;
  }
  async findControllerBroker() {
    return { initProducerId: async () => ({ producerId: 7, producerEpoch: 0 }) };
  }
  /** One object per broker, as kafkajs's broker pool keeps them (its answers are keyed by it). */
  private readonly brokers = new Map<number, object>();
  async findBroker({ nodeId }: { nodeId: string }) {
    const id = Number(nodeId);
    const known = this.brokers.get(id);
    if (known) return known;
    const broker = { nodeId: id, produce: (request: ProduceRequest) => this.produce(id, request) };
    this.brokers.set(id, broker);
    return broker;
  }

  private async produce(broker: number, request: ProduceRequest): Promise<object> {
    const call = (this.calls.get(broker) ?? 0) + 1;
    this.calls.set(broker, call);
    const data = request.topicData[0];
    this.produces.push({
      broker,
      partitions: (data?.partitions ?? []).map((p) => ({
        partition: p.partition,
        firstSequence: p.firstSequence,
        count: p.messages.length,
      })),
    });
    const write = () => ({
      topics: [
        {
          topicName: TOPIC,
          partitions: (data?.partitions ?? []).map((p) => ({
            partition: p.partition,
            errorCode: 0,
            baseOffset: String(this.append(p, request.producerId)),
          })),
        },
      ],
    });
    const behaviour = this.behaviour.get(broker);
    return behaviour ? behaviour(call, write) : write();
  }

  /** What a leader does with an idempotent producer's batch. */
  private append(batch: ProducedBatch, producerId: number): number {
    const log = this.logs.get(batch.partition) as Stored[];
    const mine = log.filter((b) => b.producerId === producerId);
    const same = mine.find(
      (b) => b.firstSequence === batch.firstSequence && b.count === batch.messages.length,
    );
    if (same) return same.baseOffset;
    const last = mine[mine.length - 1];
    const expected = last ? last.firstSequence + last.count : 0;
    if (batch.firstSequence !== expected) {
      throw new Error(`OUT_OF_ORDER_SEQUENCE_NUMBER: ${batch.firstSequence}, not ${expected}`);
    }
    const end = log[log.length - 1];
    const baseOffset = end ? end.baseOffset + end.count : 0;
    log.push({
      producerId,
      firstSequence: batch.firstSequence,
      count: batch.messages.length,
      baseOffset,
      seqs: batch.messages.map((m) => String(m.headers?.['tally.seq'])),
    });
    return baseOffset;
  }

  /** Every seq in the log, with how often it is there. */
  copies(): Map<string, number> {
    const copies = new Map<string, number>();
    for (const log of this.logs.values()) {
      for (const batch of log) {
        for (const seq of batch.seqs) copies.set(seq, (copies.get(seq) ?? 0) + 1);
      }
    }
    return copies;
  }
}

interface ProducedBatch {
  partition: number;
  firstSequence: number;
  messages: Array<{ headers?: Record<string, unknown> }>;
}
interface ProduceRequest {
  producerId: number;
  topicData: Array<{ partitions: ProducedBatch[] }>;
}

function kafkaOver(cluster: FakeCluster): Kafka {
  const logger = createLogger({ level: logLevel.NOTHING, logCreator: () => () => {} });
  return {
    producer: (config: ProducerConfig) => createProducer({ ...config, cluster, logger }),
  } as unknown as Kafka;
}

function senderOver(cluster: FakeCluster, retries = 3) {
  const logs: string[] = [];
  const sender = createRecordSender(kafkaOver(cluster), {
    retries,
    requestTimeoutMs: 5000,
    maxBatchBytes: async () => 1_048_588,
    log: (_level, message, extra) => logs.push(`${message} ${JSON.stringify(extra ?? {})}`),
  });
  return { sender, logs };
}

let seq = 0;
function records(...partitions: number[]): OutgoingRecord[] {
  return partitions.map((partition) => {
    seq++;
    return {
      partition,
      key: null,
      value: Buffer.from(`v${seq}`),
      headers: { 'tally.stream': Buffer.from(TOPIC), 'tally.seq': Buffer.from(String(seq)) },
      timestamp: 1_700_000_000_000,
    };
  });
}

const later = (ms = 10_000) => new Deadline(Date.now() + ms);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const lost = () => new KafkaJSConnectionError('Connection error: ECONNRESET');

function expectEachOnce(cluster: FakeCluster) {
  const twice = [...cluster.copies()].filter(([, n]) => n > 1);
  expect(twice, 'seqs in the log more than once, all from one producer session').toEqual([]);
}

describe('record sender over kafkajs: no attempt spans brokers', () => {
  it('seed 1: a partition written by one broker is not sent again when its leader moves while another broker fails', async () => {
    // Partition 0 led by broker 1, partition 1 by broker 2. Broker 2 fails the request, but only
    // once broker 1 has written partition 0, and by then partition 0 has moved to broker 3.
    const cluster = new FakeCluster({ 0: 1, 1: 2 });
    const { sender } = senderOver(cluster);
    const warm = await sender.send(TOPIC, records(0, 1), later());
    expect(warm.outcomes.map((o) => o.status)).toEqual(['ACKED', 'ACKED']);
    let written: () => void = () => {};
    const broker1Wrote = new Promise<void>((resolve) => {
      written = resolve;
    });
    cluster.behaviour.set(1, async (_call, write) => {
      const answer = write();
      written();
      return answer;
    });
    cluster.behaviour.set(2, async (call, write) => {
      if (call !== 2) return write();
      await broker1Wrote;
      await sleep(5);
      cluster.truth.set(0, 3);
      throw lost();
    });

    const sent = await sender.send(TOPIC, records(0, 0, 1, 1), later());

    expectEachOnce(cluster);
    expect(sent.outcomes.map((o) => o.status)).toEqual(['ACKED', 'ACKED', 'ACKED', 'ACKED']);
    expect(sent.session).toBe(warm.session);
    // Partition 0 went once (to broker 1); partition 1 twice to broker 2, with the same sequence.
    const last = cluster.produces.slice(-3);
    expect(last.map((p) => p.broker).sort()).toEqual([1, 2, 2]);
    const p1 = last.filter((p) => p.broker === 2).map((p) => p.partitions);
    expect(p1[0]).toEqual(p1[1]);
  });

  it('an attempt that would span brokers is held, then sent per broker under the same sequence numbers', async () => {
    // Both partitions led by broker 1, which writes them and loses the connection; by kafkajs's
    // retry partition 1 has moved to broker 2. The retry is not made to both; Tally sends each
    // to its leader next round, and the broker that has the batch answers with its offset.
    const cluster = new FakeCluster({ 0: 1, 1: 1 });
    const { sender } = senderOver(cluster);
    await sender.send(TOPIC, records(0, 1), later());
    cluster.behaviour.set(1, async (call, write) => {
      if (call !== 2) return write();
      write();
      cluster.truth.set(1, 2);
      throw lost();
    });

    const sent = await sender.send(TOPIC, records(0, 1, 0, 1), later());

    expectEachOnce(cluster);
    expect(sent.outcomes.map((o) => o.status)).toEqual(['ACKED', 'ACKED', 'ACKED', 'ACKED']);
    const [failed, ...again] = cluster.produces.slice(1);
    expect(failed?.broker).toBe(1);
    expect(again.map((p) => p.broker).sort()).toEqual([1, 2]);
    for (const resend of again) {
      for (const batch of resend.partitions) {
        expect(failed?.partitions).toContainEqual(batch);
      }
    }
    // Answered with the offsets of what broker 1 wrote before it failed: 2 and 3 per partition.
    const offsets = sent.outcomes.map((o) => (o.status === 'ACKED' ? o.offset : o.status));
    expect(offsets).toEqual(['1', '1', '2', '2']);
  });

  it('no attempt of a retired session goes out, not even kafkajs retrying a send already made', async () => {
    // Broker 1 fails every request after the first; kafkajs retries (100 ms and more apart) until
    // the deadline retires the session. Nothing is produced after that.
    const cluster = new FakeCluster({ 0: 1 });
    const { sender } = senderOver(cluster, 20);
    await sender.send(TOPIC, records(0), later());
    cluster.behaviour.set(1, async (call, write) => {
      if (call === 1) return write();
      throw lost();
    });

    const sent = await sender.send(TOPIC, records(0, 0), later(450));
    const produced = cluster.produces.length;
    await sleep(2500);

    expect(sent.outcomes.map((o) => o.status)).toEqual(['UNKNOWN', 'UNKNOWN']);
    expect(produced).toBeGreaterThan(2);
    expect(cluster.produces).toHaveLength(produced);
  });

  it('a 1,000-record request over 6 partitions on 3 brokers makes one request per broker', async () => {
    const cluster = new FakeCluster({ 0: 1, 1: 2, 2: 3, 3: 1, 4: 2, 5: 3 });
    const { sender } = senderOver(cluster);
    await sender.send(TOPIC, records(0, 1, 2, 3, 4, 5), later());
    const before = cluster.produces.length;

    const many = records(...Array.from({ length: 1000 }, (_, i) => i % 6));
    const sent = await sender.send(TOPIC, many, later());

    expect(sent.outcomes.every((o) => o.status === 'ACKED')).toBe(true);
    const requests = cluster.produces.slice(before);
    expect(requests.map((p) => p.broker).sort()).toEqual([1, 2, 3]);
    expectEachOnce(cluster);
  });
});
