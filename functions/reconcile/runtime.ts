import { createMappingStore } from '../adapters/dynamodb/mapping-store.js';
import { createOffsetHistory } from '../adapters/dynamodb/offset-history.js';
import { createPlanStore } from '../adapters/dynamodb/plan-store.js';
import { createReportStore } from '../adapters/dynamodb/report-store.js';
import { createRestoreRecords } from '../adapters/dynamodb/restore-records.js';
import { createGroupSource } from '../adapters/kafka/group-reader.js';
import { createOffsetWriter } from '../adapters/kafka/offset-writer.js';
import { createReconciler } from '../core/reconcile.js';
import { loadReconcileConfig, type ReconcileConfig } from '../platform/config.js';
import { dynamoDbClients } from '../platform/dynamodb-clients.js';
import { kafkaClient } from '../platform/kafka-client.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';

// The composition root of the reconcile functions, built once per container.

/** Backlog deletes per run (gone groups, unobserved history): ~1 s of DynamoDB deletes. */
const PRUNE_BUDGET = 200;

async function build(config: ReconcileConfig) {
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
  return {
    config,
    source,
    history,
    reports,
    reconciler,
    offsets: createOffsetWriter(kafka),
    plans: createPlanStore(documents, config.tables.reconcileReports),
    restores: createRestoreRecords(documents, config.tables.reconcileReports, {
      kept: config.restoresKept,
    }),
  };
}

export type ReconcileRuntime = Awaited<ReturnType<typeof build>>;

const config = loadReconcileConfig();

export const reconcileRuntime = lazyRuntime(() => build(config));
