import { ConfigResourceTypes, type Kafka } from 'kafkajs';
import type { TopicCatalog, TopicDescription } from '../../core/publish/ports.js';
import { beforeDeadline, Deadline, DeadlineExceeded } from '../../core/shared/deadline.js';
import { DependencyUnavailableError } from '../../core/shared/errors.js';
import { kafkaFailure } from './client.js';
import { createClusterIdentity } from './cluster-identity.js';
import { lazyAdmin } from './lazy-admin.js';

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
  let known = new Map<string, number>(); // topic → partitions
  // Refreshes are numbered: "missing" must come from one that started after the question.
  let started = 0;
  let completed = 0;
  let completedStartAt = Number.NEGATIVE_INFINITY; // for the TTL
  let lastStartAt = Number.NEGATIVE_INFINITY; // for the spacing
  let refreshing: Promise<void> | undefined;
  const limits = new Map<string, Promise<number>>();

  const connectedAdmin = lazyAdmin(kafka);
  const identity = createClusterIdentity(connectedAdmin);

  const startRefresh = () => {
    const number = ++started;
    const startAt = Date.now();
    lastStartAt = startAt;
    const refresh = (async () => {
      const { topics } = await (await connectedAdmin()).fetchTopicMetadata();
      if (number > completed) {
        known = new Map(topics.map((t) => [t.name, t.partitions.length]));
        completed = number;
        completedStartAt = startAt;
      }
    })().finally(() => {
      if (refreshing === refresh) refreshing = undefined;
    });
    refreshing = refresh;
    return refresh;
  };

  /**
   * Waits for a metadata refresh that starts after this call, so "missing" is never an answer
   * older than the question. Concurrent callers share refreshes, started at most once per
   * interval; a failed refresh rejects its waiters.
   */
  const refreshAfterNow = async (): Promise<void> => {
    const needed = started + 1;
    while (completed < needed) {
      if (refreshing) {
        await refreshing;
        continue;
      }
      const wait = lastStartAt + options.missRefreshIntervalMs - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (!refreshing && completed < needed) await startRefresh();
    }
  };

  const refreshIfStale = async () => {
    if (Date.now() - completedStartAt > options.ttlMs) await refreshAfterNow();
  };

  const maxMessageBytes = (topic: string): Promise<number> => {
    let limit = limits.get(topic);
    if (limit === undefined) {
      limit = (async () => {
        const { resources } = await (await connectedAdmin()).describeConfigs({
          includeSynonyms: false,
          resources: [
            { type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['max.message.bytes'] },
          ],
        });
        const value = Number(resources[0]?.configEntries[0]?.configValue);
        return Number.isFinite(value) && value > 0
          ? Math.min(value, options.maxMessageBytes)
          : options.maxMessageBytes;
      })();
      limit.catch(() => limits.delete(topic));
      limits.set(topic, limit);
    }
    return limit;
  };

  async function lookUp(topic: string): Promise<TopicDescription | undefined> {
    await refreshIfStale();
    if (!known.has(topic)) await refreshAfterNow();
    const partitions = known.get(topic);
    if (partitions === undefined) return undefined;
    return { partitions, maxMessageBytes: await maxMessageBytes(topic) };
  }

  const catalog: TopicCatalog & {
    maxMessageBytes(topic: string): Promise<number>;
    topics(): Promise<string[]>;
    clusterId(deadline?: Deadline): Promise<string>;
  } = {
    async describe(topic: string, deadline: Deadline) {
      try {
        return await beforeDeadline(lookUp(topic), deadline, 'reading topic metadata');
      } catch (error) {
        const why =
          error instanceof DeadlineExceeded
            ? 'did not answer in time'
            : `failed (${kafkaFailure(error)})`;
        throw new DependencyUnavailableError(
          `Kafka metadata for ${topic} ${why}; nothing was sent`,
          {
            cause: error,
            retryAfterSeconds: 1,
          },
        );
      }
    },
    /** Remembered per topic (describe asked already): what the record sender splits by. */
    maxMessageBytes,
    async topics() {
      await refreshIfStale();
      return [...known.keys()];
    },
    /**
     * The cluster's id never changes: asked once per container, then remembered. The request that
     * asks waits no longer than its deadline (others share the answer).
     */
    async clusterId(deadline?: Deadline) {
      try {
        return await beforeDeadline(
          identity(),
          deadline ?? new Deadline(Date.now() + 5000),
          'describing the cluster',
        );
      } catch (error) {
        const why =
          error instanceof DeadlineExceeded
            ? 'did not answer in time'
            : `failed (${kafkaFailure(error)})`;
        throw new DependencyUnavailableError(
          `Kafka, asked for its cluster id, ${why}; nothing was sent`,
          { cause: error, retryAfterSeconds: 1 },
        );
      }
    },
  };
  return catalog;
}
