import { createLedger } from '../adapters/dynamodb/ledger.js';
import { createKeyedPublishes } from '../adapters/dynamodb/reservations.js';
import { createStreamCounter } from '../adapters/dynamodb/sequence-allocator.js';
import { loadPublishConfig } from '../platform/config.js';
import { dynamoDbClients } from '../platform/dynamodb-clients.js';
import { kafkaClient } from '../platform/kafka-client.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';
import { topicCatalog } from '../publishing/catalog.js';

// The composition root of the record lookup: what the ledger and the keyed-publish items say, and the
// cluster's identity. No producer: it publishes nothing.

const config = loadPublishConfig();

export const lookupRuntime = lazyRuntime(async () => {
  const { documents } = dynamoDbClients(config);
  return {
    catalog: topicCatalog(await kafkaClient(config, 'publish'), config),
    ledger: createLedger(documents, config.tables.ledger, {
      retentionMs: config.ledgerRetentionDays * 86_400_000,
    }),
    keyed: createKeyedPublishes(
      documents,
      config.tables.reservations,
      config.idempotencyTtlSeconds,
    ),
    counter: createStreamCounter(documents, config.tables.streams),
  };
});
