import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Kafka } from 'kafkajs';
import { createLedger } from '../adapters/dynamodb/ledger.js';
import { createKeyedPublishes } from '../adapters/dynamodb/reservations.js';
import {
  createSequenceAllocator,
  createStreamCounter,
} from '../adapters/dynamodb/sequence-allocator.js';
import { createDynamoDbTxnIdPool } from '../adapters/dynamodb/txn-id-pool.js';
import { createRecordSender } from '../adapters/kafka/record-sender.js';
import { createTxnSender } from '../adapters/kafka/txn-sender.js';
import { createPublisher } from '../core/publish/publisher.js';
import { createSeqLeases } from '../core/publish/seq-leases.js';
import { createTxnIdLeaser } from '../core/publish/txn-id-pool.js';
import { Deadline } from '../core/shared/deadline.js';
import { topicAllowList } from '../core/shared/topic-names.js';
import {
  loadPublishConfig,
  type PublishConfig,
  TXN_LEASE_SKEW_MS,
  type TxnConfig,
} from '../platform/config.js';
import { dynamoDbClients } from '../platform/dynamodb-clients.js';
import { kafkaClient } from '../platform/kafka-client.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';
import { log } from '../platform/log.js';
import { topicCatalog } from './catalog.js';
import { schemaEncoderOf } from './schema-encoder.js';

// The composition root of the publish functions: everything expensive is built once per
// container, on first use, and reused by every warm invocation.

async function build(config: PublishConfig) {
  const { documents, singleAttempt } = dynamoDbClients(config);
  const kafka = await kafkaClient(config, 'publish');
  const allowTopic = topicAllowList(config.topicAllowList);
  const catalog = topicCatalog(kafka, config);
  const sender = createRecordSender(kafka, {
    retries: config.kafkaRetries,
    requestTimeoutMs: config.kafkaRequestTimeoutMs,
    maxBatchBytes: catalog.maxMessageBytes,
    log,
  });
  const ledger = createLedger(documents, config.tables.ledger, {
    retentionMs: config.ledgerRetentionDays * 86_400_000,
  });
  // One item per Idempotency-Key: reservation, lock and stored answer (no Powertools record).
  const keyed = createKeyedPublishes(
    documents,
    config.tables.reservations,
    config.idempotencyTtlSeconds,
  );
  const transactions = config.txn && transactionalSender(kafka, documents, config, config.txn);
  const publisher = createPublisher({
    catalog,
    sender,
    ledger,
    keyed,
    // SDK retries off: the allocator retries under the allocation's name (no seqs burnt twice).
    allocator: createSeqLeases(createSequenceAllocator(singleAttempt, config.tables.streams), {
      horizonMs: config.seqLeaseMax > 0 ? config.auditHorizonSeconds * 1000 : 0,
      maxLease: config.seqLeaseMax,
      windowMs: 1000,
    }),
    auditHorizonMs: config.auditHorizonSeconds * 1000,
    allowTopic,
    ...(transactions !== undefined && { transactions }),
  });
  // Metadata of the allowed topics is loaded now, not on a request's send path (seed 001).
  if (config.topicAllowList.length > 0) {
    catalog
      .topics()
      .then((topics) =>
        sender.warm(topics.filter(allowTopic).slice(0, 100), new Deadline(Date.now() + 5000)),
      )
      .catch((error: unknown) =>
        log('warn', 'could not warm topic metadata', { error: String(error) }),
      );
  }
  const counter = createStreamCounter(documents, config.tables.streams);
  return {
    config,
    allowTopic,
    catalog,
    sender,
    ledger,
    keyed,
    counter,
    publisher,
    /** Transactional publish (docs/transactions.md); undefined without TALLY_TXN_IDS_TABLE. */
    transactions,
    /** Serializes keys and values with a schema; undefined without a registry (42206). */
    schemaEncoder: schemaEncoderOf(config),
  };
}

/** Transactions under an id leased from the pool, one lease per container (its holder id). */
function transactionalSender(
  kafka: Kafka,
  documents: DynamoDBDocumentClient,
  config: PublishConfig,
  txn: TxnConfig,
) {
  const leaser = createTxnIdLeaser({
    store: createDynamoDbTxnIdPool(documents, { tableName: txn.table, pool: txn.idPrefix }),
    idPrefix: txn.idPrefix,
    poolSize: txn.poolSize,
    holder: `${process.env.AWS_LAMBDA_LOG_STREAM_NAME ?? 'local'}/${randomUUID()}`,
    leaseMs: txn.leaseMs,
    skewMs: TXN_LEASE_SKEW_MS,
    maxRequestMs: config.gatewayTimeoutMs,
  });
  return createTxnSender(kafka, {
    leaser,
    transactionTimeoutMs: txn.transactionTimeoutMs,
    requestTimeoutMs: config.kafkaRequestTimeoutMs,
    log,
  });
}

export type PublishRuntime = Awaited<ReturnType<typeof build>>;

// Configuration errors fail the cold start loudly, naming the variable.
const config = loadPublishConfig();

/** The container's runtime; a failed build is retried by the next invocation. */
export const publishRuntime = lazyRuntime(() => build(config));

// Connections and metadata are set up during Lambda's init phase, before the first request.
publishRuntime().catch((error: unknown) =>
  log('warn', 'publish runtime not ready at init', { error: String(error) }),
);
