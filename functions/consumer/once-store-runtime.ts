import { createOnceStore } from '../adapters/dynamodb/once-store.js';
import { loadOnceConfig } from '../platform/config.js';
import { dynamoDbClients } from '../platform/dynamodb-clients.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';

// The once guard's store and settings, built once per container (no kafkajs: the MSK event
// source reads the topic).

export const onceConfig = loadOnceConfig();

export const onceStore = lazyRuntime(async () =>
  createOnceStore(dynamoDbClients(onceConfig).documents, onceConfig.onceTable),
);
