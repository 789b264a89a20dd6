import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Admin, type Consumer, type KafkaMessage, Partitioners, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { startKafkaBroker } from '../../infra/local/kafka-broker.js';
import { testKafka } from '../helpers/kafka.js';
import { createTopicsEverywhere } from '../helpers/topics.js';
import { uniqueName } from '../helpers/unique-name.js';

// Proves the local broker is a real Kafka: topics, idempotent acks=all produce, a consumer
// group with commits, and committed offsets read back through the admin API.
describe('local Kafka broker', () => {
  const kafka = testKafka('tally-test-broker');
  const topic = uniqueName('broker');
  const groupId = uniqueName('group');
  let admin: Admin;
  let producer: Producer;
  let consumer: Consumer | undefined;

  beforeAll(async () => {
    admin = kafka.admin();
    await admin.connect();
    await createTopicsEverywhere(admin, [{ topic, numPartitions: 3 }]);
  });

  afterAll(async () => {
    await consumer?.disconnect();
    await producer?.disconnect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => {});
    await admin.disconnect();
  });

  it('reports the cluster id the stack announced, and a 3-partition topic', async () => {
    const cluster = await admin.describeCluster();
    expect(cluster.clusterId).toBe(inject('kafkaClusterId'));
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    expect(metadata.topics[0]?.partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2]);
  });

  it('does not create topics on demand (auto.create.topics.enable=false)', async () => {
    const missing = uniqueName('missing');
    await expect(admin.fetchTopicMetadata({ topics: [missing] })).rejects.toThrow(
      /does not host this topic-partition/,
    );
    expect(await admin.listTopics()).not.toContain(missing);
  });

  it('produces keyed records idempotently, consumes them in a group and commits', async () => {
    producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    const keys = Array.from({ length: 12 }, (_, i) => `key-${i}`);
    const sent = await producer.send({
      topic,
      acks: -1,
      messages: keys.flatMap((key) => [1, 2].map((n) => ({ key, value: `${key}:${n}` }))),
    });
    for (const meta of sent) expect(meta.errorCode).toBe(0);
    // 24 records keyed over 12 keys land on more than one of the 3 partitions.
    const offsets = await admin.fetchTopicOffsets(topic);
    const endOffsets = new Map(offsets.map((o) => [o.partition, Number(o.high)]));
    expect([...endOffsets.values()].reduce((a, b) => a + b, 0)).toBe(24);
    expect([...endOffsets.values()].filter((high) => high > 0).length).toBeGreaterThan(1);

    consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1000 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const received: KafkaMessage[] = [];
    const partitionsOf = new Map<string, Set<number>>();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`only ${received.length}/24 consumed`)),
        30_000,
      );
      consumer
        ?.run({
          autoCommit: false,
          eachMessage: async ({ partition, message }) => {
            received.push(message);
            const key = message.key?.toString() ?? '';
            partitionsOf.set(key, (partitionsOf.get(key) ?? new Set()).add(partition));
            await consumer?.commitOffsets([
              { topic, partition, offset: (BigInt(message.offset) + 1n).toString() },
            ]);
            if (received.length === 24) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
    expect(received.map((m) => m.value?.toString()).sort()).toEqual(
      keys.flatMap((key) => [`${key}:1`, `${key}:2`]).sort(),
    );
    // A key always maps to one partition.
    for (const partitions of partitionsOf.values()) expect(partitions.size).toBe(1);

    await consumer.stop();
    const committed = await admin.fetchOffsets({ groupId, topics: [topic] });
    const committedByPartition = new Map(
      committed[0]?.partitions.map((p) => [p.partition, Number(p.offset)]) ?? [],
    );
    for (const [partition, high] of endOffsets) {
      // Partitions that got no records have no commit (-1); the others are committed to the end.
      expect(committedByPartition.get(partition)).toBe(high === 0 ? -1 : high);
    }
  });

  it('says to install Java 17 or point KAFKA_BROKERS at a cluster when there is no java', async () => {
    const workDir = mkdtempSync(join(tmpdir(), 'tally-no-java-'));
    vi.stubEnv('JAVA_HOME', join(workDir, 'no-such-jdk'));
    try {
      const started = startKafkaBroker(workDir);
      await expect(started).rejects.toThrow(/needs Java 17/);
      await expect(started).rejects.toThrow(/KAFKA_BROKERS/);
    } finally {
      vi.unstubAllEnvs();
      rmSync(workDir, { recursive: true, force: true });
    }
  });
});
