import { loadPublishConfig } from '../platform/config.js';
import { kafkaClient } from '../platform/kafka-client.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';
import { topicCatalog } from '../publishing/catalog.js';

// The composition root of GET /v3/clusters: the cluster's identity, from Kafka, and nothing of
// publishing (no DynamoDB, no producer, no idempotency).

const config = loadPublishConfig();

export const clustersRuntime = lazyRuntime(async () => ({
  catalog: topicCatalog(await kafkaClient(config, 'publish'), config),
}));
