import { createAuditStore } from '../adapters/dynamodb/audit-store.js';
import { createLedger } from '../adapters/dynamodb/ledger.js';
import { loadAuditConfig } from '../platform/config.js';
import { dynamoDbClients } from '../platform/dynamodb-clients.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';

// The composition root of the publish-and-verify workflow's last task: it reads stored audit
// reports and the ledger, and never talks to Kafka (no kafkajs in its bundle).

const config = loadAuditConfig();

export const verifyRuntime = lazyRuntime(async () => {
  const { documents } = dynamoDbClients(config);
  return {
    store: createAuditStore(documents, config.auditsTable),
    ledger: createLedger(documents, config.ledgerTable, {
      retentionMs: config.ledgerRetentionDays * 86_400_000,
    }),
  };
});
