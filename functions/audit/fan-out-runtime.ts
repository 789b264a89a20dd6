import { createAuditStore } from '../adapters/dynamodb/audit-store.js';
import { lazyAdmin } from '../adapters/kafka/lazy-admin.js';
import { createLogScanner } from '../adapters/kafka/log-scanner.js';
import { DependencyUnavailableError, NotFoundError } from '../core/errors.js';
import { loadAuditConfig } from '../platform/config.js';
import { dynamoDbClients } from '../platform/dynamodb-clients.js';
import { kafkaClient } from '../platform/kafka-client.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';

// The composition root of the fan-out audit's plan and child tasks (the merge is an audit run:
// runtime.ts). Only Kafka and the audits table: no ledger, receipts or notifications here.

async function build() {
  const config = loadAuditConfig();
  const { documents } = dynamoDbClients(config);
  const kafka = await kafkaClient(config, 'audit-fan-out');
  const store = createAuditStore(documents, config.auditsTable);
  const admin = lazyAdmin(kafka);
  return {
    config,
    log: createLogScanner(kafka),
    checkpoints: { load: store.load, save: store.saveCheckpoint },
    slices: { load: store.loadSlice, save: store.saveSlice },
    /** How many partitions the topic has now. */
    async partitionCount(topic: string): Promise<number> {
      try {
        const { topics } = await (await admin()).fetchTopicMetadata({ topics: [topic] });
        return topics[0]?.partitions.length ?? 0;
      } catch (error) {
        const type = (error as { type?: string } | null)?.type;
        if (type === 'UNKNOWN_TOPIC_OR_PARTITION')
          throw new NotFoundError(`topic: ${topic} does not exist in this cluster`, {
            field: 'topic',
            cause: error,
          });
        throw new DependencyUnavailableError(`Kafka did not describe ${topic}`, { cause: error });
      }
    },
  };
}

export const fanOutRuntime = lazyRuntime(build);
