import { createLedger } from '../adapters/dynamodb/ledger.js';
import { createReservations } from '../adapters/dynamodb/reservations.js';
import { createStreamCounter } from '../adapters/dynamodb/sequence-allocator.js';
import { loadPublishConfig } from '../platform/config.js';
import { dynamoDbClients } from '../platform/dynamodb-clients.js';
import { kafkaClient } from '../platform/kafka-client.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';
import { topicCatalog } from './catalog.js';

// The composition root of the record lookup: what the ledger and the reservations say, and the
// cluster's identity. No producer and no idempotency layer: it publishes nothing.

const config = loadPublishConfig();

export const lookupRuntime = lazyRuntime(async () => {
  const { documents } = dynamoDbClients(config);
  return {
    catalog: topicCatalog(await kafkaClient(config, 'publish'), config),
    ledger: createLedger(documents, config.tables.ledger),
    reservations: createReservations(
      documents,
      config.tables.reservations,
      config.idempotencyTtlSeconds,
    ),
    counter: createStreamCounter(documents, config.tables.streams),
  };
});
