import { randomUUID } from 'node:crypto';
import { createMappingStore } from '../adapters/dynamodb/mapping-store.js';
import { createIncidentStore } from '../adapters/dynamodb/notify-state.js';
import { createOffsetHistory } from '../adapters/dynamodb/offset-history.js';
import { createPlanStore } from '../adapters/dynamodb/plan-store.js';
import { createReportStore } from '../adapters/dynamodb/report-store.js';
import { createRestoreRecords } from '../adapters/dynamodb/restore-records.js';
import { createRunPages } from '../adapters/dynamodb/run-pages.js';
import { createEventSink } from '../adapters/eventbridge/event-sink.js';
import { notifySafely } from '../adapters/eventbridge/notify-run.js';
import { createGroupSource } from '../adapters/kafka/group-reader.js';
import { createOffsetWriter } from '../adapters/kafka/offset-writer.js';
import { createGroupNotifier, type NotifyOutcome } from '../core/notify/group-notifier.js';
import { ALL_GROUPS, type GroupScope } from '../core/reconcile/group-shards.js';
import { createReconciler, type ReconcileReport } from '../core/reconcile/reconciler.js';
import { loadReconcileConfig, type ReconcileConfig } from '../platform/config.js';
import { dynamoDbClients } from '../platform/dynamodb-clients.js';
import { kafkaClient } from '../platform/kafka-client.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';
import { log } from '../platform/log.js';
import { loadNotifyConfig, type NotifyConfig } from '../platform/notify-config.js';
import { tracing } from '../platform/tracing.js';

// The composition root of the reconcile functions, built once per container.

/** Backlog deletes per run (gone groups, unobserved history): ~1 s of DynamoDB deletes. */
const PRUNE_BUDGET = 200;

async function build(config: ReconcileConfig, notifyConfig: NotifyConfig) {
  const { documents } = dynamoDbClients(config);
  const kafka = await kafkaClient(config, 'reconcile');
  const source = createGroupSource(kafka);
  const history = createOffsetHistory(documents, config.tables.offsetHistory);
  const reports = createReportStore(documents, config.tables.reconcileReports);
  const reconciler = createReconciler(
    { source, history, reports, mappings: createMappingStore(documents, config.tables.mappings) },
    {
      windowSize: config.windowSize,
      allowedLag: config.allowedLag,
      minimumComplete: config.minimumComplete,
      graceMs: config.mappingGraceMs,
      retentionMs: config.retentionMs,
      pruneBudget: PRUNE_BUDGET,
    },
  );
  const { eventBus } = notifyConfig;
  const notifier =
    eventBus === undefined
      ? undefined
      : createGroupNotifier(
          {
            incidents: createIncidentStore(documents, config.tables.reconcileReports),
            sink: createEventSink({
              region: config.region,
              eventBus,
              endpoint: notifyConfig.endpoint,
              captureClient: tracing.captureClient,
              log,
            }),
            newId: randomUUID,
          },
          notifyConfig.rules,
        );
  /**
   * A run over the groups `scope` owns (all by default; a fan-out child's shard), then Burrow's
   * notifier over its statuses (when TALLY_NOTIFY_EVENT_BUS is set).
   */
  const reconcile = async (
    scope: GroupScope = ALL_GROUPS,
  ): Promise<{ report: ReconcileReport; notified?: NotifyOutcome }> => {
    const report = await reconciler.run(scope);
    if (!notifier) return { report };
    const notified = await notifySafely(
      'reconcile',
      async () =>
        notifier.notify(report, config.burrowClusterName ?? (await source.clusterId()), scope),
      log,
    );
    return { report, notified };
  };
  return {
    config,
    reconcile,
    source,
    history,
    reports,
    reconciler,
    offsets: createOffsetWriter(kafka),
    plans: createPlanStore(documents, config.tables.reconcileReports),
    runPages: createRunPages(documents, config.tables.reconcileReports),
    restores: createRestoreRecords(documents, config.tables.reconcileReports, {
      kept: config.restoresKept,
    }),
  };
}

export type ReconcileRuntime = Awaited<ReturnType<typeof build>>;

const config = loadReconcileConfig();
const notifyConfig = loadNotifyConfig(process.env);

export const reconcileRuntime = lazyRuntime(() => build(config, notifyConfig));
