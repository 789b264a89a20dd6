import { randomBytes } from 'node:crypto';
import { createAuditStore } from '../adapters/dynamodb/audit-store.js';
import { createLedger } from '../adapters/dynamodb/ledger.js';
import { createReceiptsStore } from '../adapters/dynamodb/receipts-store.js';
import { createClusterIdentity } from '../adapters/kafka/cluster-identity.js';
import { createLogScanner } from '../adapters/kafka/log-scanner.js';
import { createAuditor } from '../core/audit.js';
import { createClients } from '../platform/clients.js';
import { type AuditConfig, loadAuditConfig } from '../platform/config.js';
import { publishAuditMetrics } from './metrics.js';

// The composition root of the audit functions, built once per container.

async function build(config: AuditConfig) {
  const { documents, kafka } = await createClients(config, 'audit');
  const auditor = createAuditor({
    ledger: createLedger(documents, config.ledgerTable),
    log: createLogScanner(kafka),
    receipts: createReceiptsStore(documents, config.receiptsTable),
  });
  const store = createAuditStore(documents, config.auditsTable);
  /** Runs an audit, stores its report under a new id and publishes its metrics. */
  const auditAndStore = async (topic: string, groups: readonly string[]) => {
    const auditId = `audit-${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}`;
    const report = await auditor.run({
      topic,
      groups,
      horizonMs: config.horizonSeconds * 1000,
      scanTimeoutMs: config.scanTimeoutMs,
    });
    await store.save(auditId, report);
    publishAuditMetrics(report);
    return { auditId, ...report };
  };
  return { config, store, auditAndStore, clusterId: createClusterIdentity(kafka) };
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
