import { createAuditStore } from '../adapters/dynamodb/audit-store.js';
import { createLogScanner } from '../adapters/kafka/log-scanner.js';
import { createPartitionCount } from '../adapters/kafka/partition-count.js';
import { loadAuditConfig } from '../platform/config.js';
import { dynamoDbClients } from '../platform/dynamodb-clients.js';
import { kafkaClient } from '../platform/kafka-client.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';
import { log } from '../platform/log.js';

// The composition root of the fan-out audit's plan and child tasks (the merge is an audit run:
// runtime.ts). Only Kafka and the audits table: no ledger, receipts or notifications here.

async function build() {
  const config = loadAuditConfig();
  const { documents } = dynamoDbClients(config);
  const kafka = await kafkaClient(config, 'audit-fan-out');
  const store = createAuditStore(documents, config.auditsTable, log);
  return {
    config,
    log: createLogScanner(kafka),
    checkpoints: { load: store.load, save: store.saveCheckpoint },
    slices: { load: store.loadSlice, save: store.saveSlice },
    /** How many partitions the topic has now. */
    partitionCount: createPartitionCount(kafka),
  };
}

export const fanOutRuntime = lazyRuntime(build);
