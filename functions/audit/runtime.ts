import { createLedger } from '../adapters/dynamodb/ledger.js';
import { createReceiptsStore } from '../adapters/dynamodb/receipts-store.js';
import { createClusterIdentity } from '../adapters/kafka/cluster-identity.js';
import { createLogScanner } from '../adapters/kafka/log-scanner.js';
import { createAuditor } from '../core/audit.js';
import { createClients } from '../platform/clients.js';
import { type AuditConfig, loadAuditConfig } from '../platform/config.js';

// The composition root of the audit functions, built once per container.

async function build(config: AuditConfig) {
  const { documents, kafka } = await createClients(config, 'audit');
  const auditor = createAuditor({
    ledger: createLedger(documents, config.ledgerTable),
    log: createLogScanner(kafka),
    receipts: createReceiptsStore(documents, config.receiptsTable),
  });
  return { config, auditor, clusterId: createClusterIdentity(kafka) };
}

const config = loadAuditConfig();
let runtime: ReturnType<typeof build> | undefined;

export function auditRuntime() {
  runtime ??= build(config).catch((error: unknown) => {
    runtime = undefined;
    throw error;
  });
  return runtime;
}
