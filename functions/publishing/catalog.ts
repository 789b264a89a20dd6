import type { Kafka } from 'kafkajs';
import { createTopicCatalog } from '../adapters/kafka/topic-catalog.js';
import type { PublishConfig } from '../platform/config.js';

/** The container's topic catalog, the same for the publish runtime and the read routes. */
export function topicCatalog(kafka: Kafka, config: PublishConfig) {
  return createTopicCatalog(kafka, {
    ttlMs: 60_000,
    missRefreshIntervalMs: 100,
    maxMessageBytes: config.maxMessageBytes,
  });
}
