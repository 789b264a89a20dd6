import { createGroupSource } from '../adapters/kafka/group-reader.js';
import { loadReconcileConfig } from '../platform/config.js';
import { kafkaClient } from '../platform/kafka-client.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';

// The composition root of the reconcile fan-out's plan: Kafka's group listing only (the children
// are reconcile runs: runtime.ts; the merge reads nothing).

async function build() {
  const config = loadReconcileConfig();
  return { config, source: createGroupSource(await kafkaClient(config, 'reconcile-fan-out')) };
}

export const fanOutRuntime = lazyRuntime(build);
