import { createLedger } from '../adapters/dynamodb/ledger.js';
import { createKeyedPublishes } from '../adapters/dynamodb/reservations.js';
import { createStreamCounter } from '../adapters/dynamodb/sequence-allocator.js';
import { createDynamoDbTxnIdPool } from '../adapters/dynamodb/txn-id-pool.js';
import { createTxnSettler } from '../adapters/kafka/txn-sender.js';
import { loadPublishConfig, TXN_LEASE_SKEW_MS } from '../platform/config.js';
import { dynamoDbClients } from '../platform/dynamodb-clients.js';
import { kafkaClient } from '../platform/kafka-client.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';
import { log } from '../platform/log.js';
import { topicCatalog } from '../publishing/catalog.js';

// The composition root of the record lookup: what the ledger and the keyed-publish items say, and the
// cluster's identity. No producer: it publishes nothing. With the transactional id pool configured,
// it also settles a transactional request left PREPARED (docs/transactions.md): the pool's leases
// read, the offsets read read_committed, the id fenced only when no live container holds it.

const config = loadPublishConfig();

export const lookupRuntime = lazyRuntime(async () => {
  const { documents } = dynamoDbClients(config);
  const kafka = await kafkaClient(config, 'publish');
  const ledger = createLedger(documents, config.tables.ledger, {
    retentionMs: config.ledgerRetentionDays * 86_400_000,
  });
  const { txn } = config;
  const pool =
    txn && createDynamoDbTxnIdPool(documents, { tableName: txn.table, pool: txn.idPrefix });
  return {
    config,
    catalog: topicCatalog(kafka, config),
    ledger,
    keyed: createKeyedPublishes(
      documents,
      config.tables.reservations,
      config.idempotencyTtlSeconds,
    ),
    counter: createStreamCounter(documents, config.tables.streams),
    /** Settling of transactional blocks; undefined without TALLY_TXN_IDS_TABLE. */
    settling: txn &&
      pool && {
        ledger,
        transactions: createTxnSettler(kafka, {
          transactionTimeoutMs: txn.transactionTimeoutMs,
          requestTimeoutMs: config.kafkaRequestTimeoutMs,
          log,
        }),
        leaseOf: async (txnId: string) => (await pool.leases()).find((l) => l.txnId === txnId),
        transactionTimeoutMs: txn.transactionTimeoutMs,
        skewMs: TXN_LEASE_SKEW_MS,
      },
  };
});
