import { type Admin, ConfigResourceTypes, type Kafka } from 'kafkajs';
import { beforeDeadline, Deadline, DeadlineExceeded } from '../../core/deadline.js';
import { DependencyUnavailableError } from '../../core/errors.js';
import type { TopicCatalog, TopicDescription } from '../../core/publish-ports.js';

export interface TopicCatalogOptions {
  /** How long a topic's description is trusted. */
  readonly ttlMs: number;
  /** Refreshes start at most once per this interval, however many topics are not found. */
  readonly missRefreshIntervalMs: number;
  /** Upper bound for records, whatever a topic allows (broker default 1048588). */
  readonly maxMessageBytes: number;
}

/**
 * Which topics exist, with partition counts and max.message.bytes, from the admin client's
 * all-topics metadata. Asking about a missing topic never names it to the producer, and a flood
 * of requests for missing topics costs at most one refresh per interval (seed 000).
 */
export function createTopicCatalog(kafka: Kafka, options: TopicCatalogOptions) {
  let admin: Promise<Admin> | undefined;
  let known = new Map<string, number>(); // topic → partitions
  let completedStart = Number.NEGATIVE_INFINITY; // start time of the last finished refresh
  let lastStart = Number.NEGATIVE_INFINITY;
  let refreshing: Promise<void> | undefined;
  const limits = new Map<string, number>();
  let clusterId: Promise<string> | undefined;

  const connectedAdmin = () => {
    admin ??= (async () => {
      const client = kafka.admin();
      await client.connect();
      return client;
    })().catch((error: unknown) => {
      admin = undefined;
      throw error;
    });
    return admin;
  };

  const startRefresh = () => {
    const startedAt = Date.now();
    lastStart = startedAt;
    refreshing = (async () => {
      const { topics } = await (await connectedAdmin()).fetchTopicMetadata();
      known = new Map(topics.map((t) => [t.name, t.partitions.length]));
      completedStart = startedAt;
    })().finally(() => {
      refreshing = undefined;
    });
    return refreshing;
  };

  /**
   * Waits for a metadata refresh that started at or after `since`, so "missing" is never an old
   * answer; refreshes are shared by concurrent callers and started at most once per interval.
   */
  const refreshSince = async (since: number): Promise<void> => {
    while (completedStart < since) {
      if (refreshing) {
        const startedLate = lastStart >= since;
        await refreshing;
        if (startedLate) return;
        continue;
      }
      const wait = lastStart + options.missRefreshIntervalMs - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (!refreshing && completedStart < since) await startRefresh();
    }
  };

  const maxMessageBytes = async (topic: string) => {
    const cached = limits.get(topic);
    if (cached !== undefined) return cached;
    const { resources } = await (await connectedAdmin()).describeConfigs({
      includeSynonyms: false,
      resources: [
        { type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['max.message.bytes'] },
      ],
    });
    const value = Number(resources[0]?.configEntries[0]?.configValue);
    const limit =
      Number.isFinite(value) && value > 0
        ? Math.min(value, options.maxMessageBytes)
        : options.maxMessageBytes;
    limits.set(topic, limit);
    return limit;
  };

  async function lookUp(topic: string): Promise<TopicDescription | undefined> {
    const asked = Date.now();
    if (asked - completedStart > options.ttlMs) await refreshSince(asked - options.ttlMs);
    if (!known.has(topic)) await refreshSince(asked);
    const partitions = known.get(topic);
    if (partitions === undefined) return undefined;
    return { partitions, maxMessageBytes: await maxMessageBytes(topic) };
  }

  const catalog: TopicCatalog & {
    topics(): Promise<string[]>;
    clusterId(deadline?: Deadline): Promise<string>;
  } = {
    async describe(topic: string, deadline: Deadline) {
      try {
        return await beforeDeadline(lookUp(topic), deadline, 'reading topic metadata');
      } catch (error) {
        const why =
          error instanceof DeadlineExceeded ? 'did not answer in time' : `failed: ${String(error)}`;
        throw new DependencyUnavailableError(
          `Kafka metadata for ${topic} ${why}; nothing was sent`,
          {
            cause: error,
            retryAfterSeconds: 1,
          },
        );
      }
    },
    async topics() {
      await refreshSince(Date.now() - options.ttlMs);
      return [...known.keys()];
    },
    /**
     * The cluster's id never changes: asked once per container, then remembered. The request that
     * asks waits no longer than its deadline (others share the answer).
     */
    async clusterId(deadline?: Deadline) {
      clusterId ??= (async () => (await connectedAdmin()).describeCluster())()
        .then((cluster) => cluster.clusterId)
        .catch((error: unknown) => {
          clusterId = undefined;
          throw error;
        });
      try {
        return await beforeDeadline(
          clusterId,
          deadline ?? new Deadline(Date.now() + 5000),
          'describing the cluster',
        );
      } catch (error) {
        throw new DependencyUnavailableError(
          `Kafka did not say its cluster id (${String(error)}); nothing was sent`,
          { cause: error, retryAfterSeconds: 1 },
        );
      }
    },
  };
  return catalog;
}
