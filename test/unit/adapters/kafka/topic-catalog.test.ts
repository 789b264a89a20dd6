import type { DescribeConfigResponse, ITopicMetadata, Kafka } from 'kafkajs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createTopicCatalog,
  type TopicCatalogOptions,
} from '../../../../functions/adapters/kafka/topic-catalog.js';
import { Deadline } from '../../../../functions/core/shared/deadline.js';
import { DependencyUnavailableError } from '../../../../functions/core/shared/errors.js';

// ---------------------------------------------------------------------------------------------
// A fake kafkajs client whose admin() answers from `topics`, counting calls.

interface FakeAdminOptions {
  /** Partition counts by topic; the test changes it to create topics. */
  readonly topics: Map<string, number>;
  /** max.message.bytes by topic (as the broker's string); absent = '2048'. */
  readonly maxMessageBytes?: Map<string, string>;
  readonly hang?: boolean;
  readonly metadataDelayMs?: number;
  /** How many metadata requests fail before they succeed. */
  metadataFailures?: number;
}

class FakeKafka {
  readonly calls = {
    admin: 0,
    connect: 0,
    fetchTopicMetadata: 0,
    describeConfigs: 0,
    describeCluster: 0,
  };
  readonly describedConfigs: string[] = [];

  constructor(private readonly options: FakeAdminOptions) {}

  admin() {
    this.calls.admin += 1;
    const { options, calls, describedConfigs } = this;
    const answer = async <T>(value: () => T, delayMs = 0): Promise<T> => {
      if (options.hang) return new Promise<T>(() => {});
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return value();
    };
    return {
      connect: async () => {
        calls.connect += 1;
        return answer(() => undefined);
      },
      disconnect: async () => {},
      fetchTopicMetadata: async (): Promise<{ topics: ITopicMetadata[] }> => {
        calls.fetchTopicMetadata += 1;
        if ((options.metadataFailures ?? 0) > 0) {
          options.metadataFailures = (options.metadataFailures ?? 0) - 1;
          throw new Error('There is no leader for this topic-partition');
        }
        // The snapshot is taken when the broker answers, as with a real request.
        return answer(
          () => ({
            topics: [...options.topics].map(([name, count]) => ({
              name,
              partitions: Array.from({ length: count }, (_, partitionId) => ({
                partitionErrorCode: 0,
                partitionId,
                leader: 1,
                replicas: [1],
                isr: [1],
              })),
            })),
          }),
          options.metadataDelayMs,
        );
      },
      describeConfigs: async (request: {
        resources: Array<{ name: string }>;
      }): Promise<DescribeConfigResponse> => {
        calls.describeConfigs += 1;
        const name = request.resources[0]?.name ?? '';
        describedConfigs.push(name);
        const value = options.maxMessageBytes?.get(name) ?? '2048';
        return answer(
          () =>
            ({
              throttleTime: 0,
              resources: [
                {
                  errorCode: 0,
                  errorMessage: null,
                  resourceName: name,
                  resourceType: 2,
                  configEntries: [
                    {
                      configName: 'max.message.bytes',
                      configValue: value,
                      isDefault: false,
                      configSource: 1,
                      isSensitive: false,
                      readOnly: false,
                      configSynonyms: [],
                    },
                  ],
                },
              ],
            }) as unknown as DescribeConfigResponse,
        );
      },
      describeCluster: async () => {
        calls.describeCluster += 1;
        return answer(() => ({ clusterId: 'cluster-xyz', brokers: [], controller: 1 }));
      },
    };
  }

  asKafka(): Kafka {
    return this as unknown as Kafka;
  }
}

const OPTIONS: TopicCatalogOptions = {
  ttlMs: 60_000,
  missRefreshIntervalMs: 20,
  maxMessageBytes: 1_048_588,
};

const later = () => new Deadline(Date.now() + 5_000);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('createTopicCatalog: describe', () => {
  it('returns the partitions and the topic max.message.bytes under the configured bound', async () => {
    const kafka = new FakeKafka({ topics: new Map([['orders', 6]]) });
    const catalog = createTopicCatalog(kafka.asKafka(), OPTIONS);

    const described = await catalog.describe('orders', later());

    expect(described).toEqual({ partitions: 6, maxMessageBytes: 2048 });
    expect(kafka.calls.admin).toBe(1);
    expect(kafka.calls.connect).toBe(1);
    expect(kafka.calls.fetchTopicMetadata).toBe(1);
  });

  it('bounds max.message.bytes by the configured maximum', async () => {
    const kafka = new FakeKafka({
      topics: new Map([
        ['big', 1],
        ['odd', 1],
      ]),
      maxMessageBytes: new Map([
        ['big', '10485760'],
        ['odd', 'not a number'],
      ]),
    });
    const catalog = createTopicCatalog(kafka.asKafka(), { ...OPTIONS, maxMessageBytes: 4096 });

    expect(await catalog.describe('big', later())).toEqual({
      partitions: 1,
      maxMessageBytes: 4096,
    });
    expect(await catalog.describe('odd', later())).toEqual({
      partitions: 1,
      maxMessageBytes: 4096,
    });
  });

  it('asks for max.message.bytes once per topic', async () => {
    const kafka = new FakeKafka({
      topics: new Map([
        ['orders', 3],
        ['payments', 1],
      ]),
    });
    const catalog = createTopicCatalog(kafka.asKafka(), OPTIONS);

    for (let i = 0; i < 5; i++) {
      await catalog.describe('orders', later());
      await catalog.describe('payments', later());
    }

    expect(kafka.calls.describeConfigs).toBe(2);
    expect(kafka.describedConfigs).toEqual(['orders', 'payments']);
    expect(kafka.calls.fetchTopicMetadata).toBe(1);
    expect(kafka.calls.admin).toBe(1);
  });

  it('asks for max.message.bytes once per topic, also when many requests ask at once', async () => {
    const kafka = new FakeKafka({ topics: new Map([['orders', 3]]) });
    const catalog = createTopicCatalog(kafka.asKafka(), OPTIONS);

    const answers = await Promise.all(
      Array.from({ length: 20 }, () => catalog.describe('orders', later())),
    );

    expect(answers).toEqual(
      Array.from({ length: 20 }, () => ({ partitions: 3, maxMessageBytes: 2048 })),
    );
    expect(kafka.calls.describeConfigs).toBe(1);
  });

  it('says undefined for a missing topic', async () => {
    const kafka = new FakeKafka({ topics: new Map([['orders', 3]]) });
    const catalog = createTopicCatalog(kafka.asKafka(), OPTIONS);

    expect(await catalog.describe('nope', later())).toBeUndefined();
    expect(kafka.calls.describeConfigs).toBe(0);
  });
});

describe('createTopicCatalog: freshness', () => {
  it('finds a topic created after a miss (the next miss refreshes)', async () => {
    const topics = new Map([['orders', 3]]);
    const kafka = new FakeKafka({ topics });
    const catalog = createTopicCatalog(kafka.asKafka(), OPTIONS);

    expect(await catalog.describe('fresh', later())).toBeUndefined();
    const refreshesBefore = kafka.calls.fetchTopicMetadata;
    await new Promise((resolve) => setTimeout(resolve, 5));
    topics.set('fresh', 2);

    expect(await catalog.describe('fresh', later())).toEqual({
      partitions: 2,
      maxMessageBytes: 2048,
    });
    expect(kafka.calls.fetchTopicMetadata).toBe(refreshesBefore + 1);
  });

  it('finds a topic created after a known topic was described', async () => {
    const topics = new Map([['orders', 3]]);
    const kafka = new FakeKafka({ topics });
    const catalog = createTopicCatalog(kafka.asKafka(), OPTIONS);

    await catalog.describe('orders', later());
    await new Promise((resolve) => setTimeout(resolve, 5));
    topics.set('fresh', 1);

    expect(await catalog.describe('fresh', later())).toEqual({
      partitions: 1,
      maxMessageBytes: 2048,
    });
  });

  it('never answers "missing" from metadata fetched before the question, same millisecond or not', async () => {
    // The clock does not move: a refresh runs and finishes, then the topic is created, then it is
    // asked for — all within one millisecond, as happens when requests arrive close together.
    const now = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(now);
    const topics = new Map([['orders', 3]]);
    const kafka = new FakeKafka({ topics });
    const catalog = createTopicCatalog(kafka.asKafka(), { ...OPTIONS, missRefreshIntervalMs: 0 });

    expect(await catalog.describe('orders', new Deadline(now + 5_000))).toBeDefined();
    topics.set('fresh', 2);

    expect(await catalog.describe('fresh', new Deadline(now + 5_000))).toEqual({
      partitions: 2,
      maxMessageBytes: 2048,
    });
  });

  it('shares refreshes among concurrent misses', async () => {
    const kafka = new FakeKafka({ topics: new Map([['orders', 3]]), metadataDelayMs: 10 });
    const catalog = createTopicCatalog(kafka.asKafka(), OPTIONS);
    await catalog.describe('orders', later());
    await new Promise((resolve) => setTimeout(resolve, 2));
    const before = kafka.calls.fetchTopicMetadata;

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => catalog.describe(`missing-${i}`, later())),
    );

    expect(answers).toEqual(Array.from({ length: 20 }, () => undefined));
    expect(kafka.calls.fetchTopicMetadata - before).toBeGreaterThanOrEqual(1);
    expect(kafka.calls.fetchTopicMetadata - before).toBeLessThanOrEqual(3);
  });

  it('shares the first refresh among concurrent first questions', async () => {
    const kafka = new FakeKafka({ topics: new Map([['orders', 3]]), metadataDelayMs: 10 });
    const catalog = createTopicCatalog(kafka.asKafka(), OPTIONS);

    const answers = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => catalog.describe(`missing-${i}`, later())),
      catalog.describe('orders', later()),
    ]);

    expect(answers.at(-1)).toEqual({ partitions: 3, maxMessageBytes: 2048 });
    expect(kafka.calls.fetchTopicMetadata).toBeLessThanOrEqual(3);
    expect(kafka.calls.admin).toBe(1);
    expect(kafka.calls.connect).toBe(1);
  });

  it('refreshes a known topic once its description is older than the TTL', async () => {
    const topics = new Map([['orders', 3]]);
    const kafka = new FakeKafka({ topics });
    const catalog = createTopicCatalog(kafka.asKafka(), { ...OPTIONS, ttlMs: 30 });

    expect(await catalog.describe('orders', later())).toMatchObject({ partitions: 3 });
    topics.set('orders', 6);
    await new Promise((resolve) => setTimeout(resolve, 50));

    expect(await catalog.describe('orders', later())).toMatchObject({ partitions: 6 });
    expect(kafka.calls.fetchTopicMetadata).toBe(2);
  });
});

describe('createTopicCatalog: clusterId', () => {
  it('is asked once and remembered', async () => {
    const kafka = new FakeKafka({ topics: new Map() });
    const catalog = createTopicCatalog(kafka.asKafka(), OPTIONS);

    const ids = await Promise.all([catalog.clusterId(later()), catalog.clusterId()]);
    const again = await catalog.clusterId(later());

    expect(ids).toEqual(['cluster-xyz', 'cluster-xyz']);
    expect(again).toBe('cluster-xyz');
    expect(kafka.calls.describeCluster).toBe(1);
    expect(kafka.calls.admin).toBe(1);
  });

  it('is a 503 by the deadline when Kafka does not answer', async () => {
    const kafka = new FakeKafka({ topics: new Map(), hang: true });
    const catalog = createTopicCatalog(kafka.asKafka(), OPTIONS);
    const started = Date.now();

    const error = await catalog.clusterId(new Deadline(started + 50)).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(DependencyUnavailableError);
    expect(Date.now() - started).toBeLessThan(300);
    // The caller's own deadline ran out: said in words a client (and the fuzz test) recognise.
    expect((error as Error).message).toBe(
      'Kafka, asked for its cluster id, did not answer in time; nothing was sent',
    );
  });
});

describe('createTopicCatalog: Kafka not answering', () => {
  it('describe rejects with DependencyUnavailableError (503) by the deadline', async () => {
    const kafka = new FakeKafka({ topics: new Map([['orders', 3]]), hang: true });
    const catalog = createTopicCatalog(kafka.asKafka(), OPTIONS);
    const started = Date.now();

    const error = await catalog
      .describe('orders', new Deadline(started + 50))
      .catch((e: unknown) => e);

    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(DependencyUnavailableError);
    expect((error as DependencyUnavailableError).status).toBe(503);
    expect((error as DependencyUnavailableError).retryAfterSeconds).toBe(1);
    expect((error as DependencyUnavailableError).message).toContain('orders');
    expect(elapsed).toBeGreaterThanOrEqual(45);
    expect(elapsed).toBeLessThan(300);
  });

  it('describe rejects with DependencyUnavailableError when the metadata request fails', async () => {
    const kafka = new FakeKafka({ topics: new Map([['orders', 3]]), metadataFailures: 1 });
    const catalog = createTopicCatalog(kafka.asKafka(), OPTIONS);

    const error = await catalog.describe('orders', later()).catch((e: unknown) => e);
    const retried = await catalog.describe('orders', later());

    expect(error).toBeInstanceOf(DependencyUnavailableError);
    expect(retried).toEqual({ partitions: 3, maxMessageBytes: 2048 });
    expect(kafka.calls.fetchTopicMetadata).toBe(2);
  });
});
