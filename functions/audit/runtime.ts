import { randomBytes } from 'node:crypto';
import { createAuditStore } from '../adapters/dynamodb/audit-store.js';
import { createLedger } from '../adapters/dynamodb/ledger.js';
import { createNotedStore } from '../adapters/dynamodb/notify-state.js';
import { createReceiptsStore } from '../adapters/dynamodb/receipts-store.js';
import { createReportStore } from '../adapters/dynamodb/report-store.js';
import { createStreamCounter } from '../adapters/dynamodb/sequence-allocator.js';
import { createEventSink } from '../adapters/eventbridge/event-sink.js';
import { notifySafely } from '../adapters/eventbridge/notify-run.js';
import { createClusterIdentity } from '../adapters/kafka/cluster-identity.js';
import { lazyAdmin } from '../adapters/kafka/lazy-admin.js';
import { createLogScanner } from '../adapters/kafka/log-scanner.js';
import { createTxnSettler } from '../adapters/kafka/txn-sender.js';
import { createAuditor } from '../core/audit/auditor.js';
import type { AuditRequest, ReconcileEvent } from '../core/audit/ports.js';
import { createAuditNotifier } from '../core/notify/audit-notifier.js';
import type { GroupReport, ReportStore } from '../core/reconcile/ports.js';
import { type AuditConfig, loadAuditConfig } from '../platform/config.js';
import { dynamoDbClients } from '../platform/dynamodb-clients.js';
import { kafkaClient } from '../platform/kafka-client.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';
import { log } from '../platform/log.js';
import { loadNotifyConfig, type NotifyConfig } from '../platform/notify-config.js';
import { tracing } from '../platform/tracing.js';
import { publishAuditMetrics } from './metrics.js';
import { scanDeadline } from './scan-deadline.js';

// The composition root of the audit functions, built once per container.

const EVENT_LOOKBACK_MS = 14 * 86_400_000;

/** REWIND and LOST partitions of a topic in a group's stored reconcile reports (14 days). */
function reconcileEvents(reports: ReportStore) {
  return {
    async events(group: string, topic: string): Promise<ReconcileEvent[]> {
      const history = (await reports.groupReportsSince(
        group,
        Date.now() - EVENT_LOOKBACK_MS,
      )) as GroupReport[];
      return history.flatMap((report) =>
        report.partitions
          .filter((p) => p.topic === topic && (p.status === 'REWIND' || p.status === 'LOST'))
          .map((p) => ({
            at: new Date(p.end?.observedAt ?? 0).toISOString(),
            partition: p.partition,
            status: p.status as 'REWIND' | 'LOST',
            detail: p.rewind ?? p.lost,
          })),
      );
    },
  };
}

async function build(config: AuditConfig, notifyConfig: NotifyConfig) {
  const { documents } = dynamoDbClients(config);
  const kafka = await kafkaClient(config, 'audit');
  const store = createAuditStore(documents, config.auditsTable);
  const ledger = createLedger(documents, config.ledgerTable, {
    retentionMs: config.ledgerRetentionDays * 86_400_000,
  });
  const auditor = createAuditor({
    ledger,
    log: createLogScanner(kafka),
    receipts: createReceiptsStore(documents, config.receiptsTable),
    checkpoints: { load: store.load, save: store.saveCheckpoint },
    slices: { load: store.loadSlice, save: store.saveSlice },
    seqFates: { counter: createStreamCounter(documents, config.streamsTable), ledger },
    reconcile: reconcileEvents(createReportStore(documents, config.reconcileReportsTable)),
    transactions: {
      settler: createTxnSettler(kafka, {
        transactionTimeoutMs: config.transactionTimeoutMs,
        requestTimeoutMs: 30_000,
        log,
        // Within the audit's own groups' grant (tally-audit-*).
        groupPrefix: 'tally-audit-settle',
      }),
      ledger,
      transactionTimeoutMs: config.transactionTimeoutMs,
    },
  });
  const { eventBus } = notifyConfig;
  const notifier =
    eventBus === undefined
      ? undefined
      : createAuditNotifier({
          noted: createNotedStore(documents, config.auditsTable, log),
          sink: createEventSink({
            region: config.region,
            eventBus,
            endpoint: notifyConfig.endpoint,
            captureClient: tracing.captureClient,
            log,
          }),
        });
  /**
   * Runs an audit, stores its report under a new id, publishes its metrics and (when
   * TALLY_NOTIFY_EVENT_BUS is set) an event per stream whose lost or duplicated records grew.
   * With `fanOut`, the run merges the slices fan-out children read instead of reading the log.
   */
  const auditAndStore = async (
    topic: string,
    groups: readonly string[],
    remainingMs: number,
    fanOut?: AuditRequest['fanOut'],
  ) => {
    const auditId = `audit-${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}`;
    const report = await auditor.run({
      topic,
      groups,
      horizonMs: config.horizonSeconds * 1000,
      bucketMs: config.bucketSeconds * 1000,
      retentionMs: config.retentionSeconds * 1000,
      ledgerLagMs: config.ledgerLagSeconds * 1000,
      scanDeadlineAt: scanDeadline(Date.now(), remainingMs, config.scanTimeoutMs),
      ...(fanOut && { fanOut }),
    });
    await store.save(auditId, report);
    publishAuditMetrics(report);
    if (notifier) await notifySafely('audit', () => notifier.notify({ auditId, ...report }), log);
    return { auditId, ...report };
  };
  return {
    config,
    store,
    ledger,
    auditAndStore,
    clusterId: createClusterIdentity(lazyAdmin(kafka)),
  };
}

const config = loadAuditConfig();
const notifyConfig = loadNotifyConfig(process.env);

export const auditRuntime = lazyRuntime(() => build(config, notifyConfig));
