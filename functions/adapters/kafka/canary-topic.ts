import type { Kafka } from 'kafkajs';
import type { CanaryPorts } from '../../core/canary/run-canary.js';
import { beforeDeadline, type Deadline } from '../../core/shared/deadline.js';
import { DependencyUnavailableError } from '../../core/shared/errors.js';
import { lazyAdmin } from './lazy-admin.js';
import { createLogScanner } from './log-scanner.js';

export interface CanaryTopicOptions {
  /** Partitions when the topic is created; 0: one per broker (Xinfra Monitor's rule). */
  readonly partitions: number;
  /** Replicas when the topic is created; 0: three, or as many brokers as there are. */
  readonly replicationFactor: number;
}

/**
 * The canary's Kafka side: its topic's partition count (the topic created on first use, so a new
 * deployment's canary needs no manual step) and the read-back, through the audit's log scanner —
 * a consumer of its own, not the producer that wrote the records.
 */
export function createCanaryTopic(
  kafka: Kafka,
  options: CanaryTopicOptions,
): Pick<CanaryPorts, 'partitions' | 'readBack'> & { close(): Promise<void> } {
  const admin = lazyAdmin(kafka);
  const scanner = createLogScanner(kafka);

  async function partitionCount(topic: string): Promise<number | undefined> {
    const { topics } = await (await admin()).fetchTopicMetadata({ topics: [] });
    return topics.find((t) => t.name === topic)?.partitions.length;
  }

  async function create(topic: string): Promise<void> {
    const client = await admin();
    const brokers = (await client.describeCluster()).brokers.length;
    await client.createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic,
          numPartitions: options.partitions || brokers,
          replicationFactor: options.replicationFactor || Math.min(3, brokers),
        },
      ],
    });
  }

  return {
    async partitions(topic: string, deadline: Deadline) {
      try {
        return await beforeDeadline(
          (async () => {
            const known = await partitionCount(topic);
            if (known !== undefined) return known;
            await create(topic); // false when another run created it first: fine either way
            const created = await partitionCount(topic);
            if (created === undefined) throw new Error(`${topic} was not created`);
            return created;
          })(),
          deadline,
          `the canary topic ${topic}`,
        );
      } catch (error) {
        throw new DependencyUnavailableError(
          `Kafka did not give or create the canary topic ${topic}: ${(error as Error).message}`,
          { cause: error },
        );
      }
    },
    async readBack(topic, from, deadline, onRecord) {
      // To each named partition's end (the scan stops at the high watermark it finds).
      const until = new Map([...from.keys()].map((p) => [p, Number.MAX_SAFE_INTEGER]));
      const result = await scanner.scan(
        topic,
        { from, until, deadlineAt: deadline.at },
        (record) => {
          const seq = Number(record.headers['tally.seq']);
          onRecord({
            stream: record.headers['tally.stream'],
            seq: Number.isSafeInteger(seq) ? seq : undefined,
            partition: record.partition,
            offset: record.offset,
          });
        },
      );
      return { complete: result.complete };
    },
    async close() {
      await admin.close();
    },
  };
}
