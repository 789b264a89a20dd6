import { createClusterIdentity } from '../adapters/kafka/cluster-identity.js';
import { lazyAdmin } from '../adapters/kafka/lazy-admin.js';
import { receiptsStore } from '../consumer/receipts-store-runtime.js';
import { loadReceiptsConfig } from '../platform/config.js';
import { kafkaClient } from '../platform/kafka-client.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';

// The composition root of the receipts API, built once per container: the store, and the
// cluster's identity for the path's cluster check.

const config = loadReceiptsConfig();

export const receiptsRuntime = lazyRuntime(async () => ({
  store: await receiptsStore(),
  clusterId: createClusterIdentity(lazyAdmin(await kafkaClient(config, 'receipts'))),
}));
