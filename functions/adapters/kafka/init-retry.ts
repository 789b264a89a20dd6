import type { RetryOptions } from 'kafkajs';
import Cluster from 'kafkajs/src/cluster/index.js';

// kafkajs 2.2.4 retries InitProducerId (and TxnOffsetCommit) with `createRetry(cluster.retry)`
// (producer/eosManager/index.js), but its Cluster never sets `retry`: the retrier is always
// kafkajs's defaults, chosen once by NODE_ENV when retry/index.js loads — 300 ms first backoff,
// doubling, 5 retries in production (retry/defaults.js); 50 ms, ×1.5, 15 retries under
// NODE_ENV=test (defaults.test.js, which Vitest sets). Neither the client's `retry` nor the
// producer's reaches it. A fence of an id whose transaction is open always waits for at least one
// retry (the coordinator aborts that transaction and answers CONCURRENT_TRANSACTIONS until its
// markers are written), so it waited 300 ms steps: 1.1–1.7 s on three local brokers.
//
// `cluster.retry` is read in two places only, both while a producer is made (producer/index.js
// merges it under the producer's own retry; the eosManager keeps it for InitProducerId). A getter
// on Cluster's prototype answers undefined — what kafkajs reads today — except while
// `withInitRetry` makes a producer, when it answers the retry given. Only producers made inside it
// change; every other client of kafkajs in the process reads exactly what it read before.

let current: RetryOptions | undefined;
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const prototype = (Cluster as unknown as { prototype: object }).prototype;
  if (Object.getOwnPropertyDescriptor(prototype, 'retry') !== undefined) {
    throw new Error('kafkajs Cluster has a retry of its own now: init-retry.ts no longer applies');
  }
  Object.defineProperty(prototype, 'retry', {
    configurable: true,
    get: () => current,
  });
}

/**
 * Runs `make` (synchronous: kafka.producer(), or the first producer.transaction() call, whose
 * InitProducerId retrier is made before its first await) with `retry` as the retrier kafkajs gives
 * InitProducerId. kafkajs makes the retrier synchronously, so nothing else runs meanwhile.
 */
export function withInitRetry<T>(retry: RetryOptions, make: () => T): T {
  install();
  const before = current;
  current = retry;
  try {
    return make();
  } finally {
    current = before;
  }
}
