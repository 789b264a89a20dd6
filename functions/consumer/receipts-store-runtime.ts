import { createReceiptsStore } from '../adapters/dynamodb/receipts-store.js';
import { loadReceiptsConfig } from '../platform/config.js';
import { dynamoDbClients } from '../platform/dynamodb-clients.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';

// Where receipts are kept, and nothing else: the downstream example stores them and never talks
// to Kafka (Lambda's MSK event source reads the topic), so its bundle has no kafkajs.

const config = loadReceiptsConfig();

export const receiptsStore = lazyRuntime(async () =>
  createReceiptsStore(dynamoDbClients(config).documents, config.receiptsTable),
);
