import { createReceiptsStore } from '../adapters/dynamodb/receipts-store.js';
import { createClusterIdentity } from '../adapters/kafka/cluster-identity.js';
import { lazyAdmin } from '../adapters/kafka/lazy-admin.js';
import { createClients } from '../platform/clients.js';
import { loadReceiptsConfig, type ReceiptsConfig } from '../platform/config.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';

// The composition root of the receipts functions, built once per container.

async function build(config: ReceiptsConfig) {
  const { documents, kafka } = await createClients(config, 'receipts');
  return {
    store: createReceiptsStore(documents, config.receiptsTable),
    clusterId: createClusterIdentity(lazyAdmin(kafka)),
  };
}

const config = loadReceiptsConfig();

export const receiptsRuntime = lazyRuntime(() => build(config));
