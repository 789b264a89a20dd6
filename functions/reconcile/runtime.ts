import { createDynamoDbClients } from '../adapters/dynamodb/client.js';
import { createMappingStore } from '../adapters/dynamodb/mapping-store.js';
import { createOffsetHistory } from '../adapters/dynamodb/offset-history.js';
import { createReportStore } from '../adapters/dynamodb/report-store.js';
import { createKafkaClient } from '../adapters/kafka/client.js';
import { createGroupSource } from '../adapters/kafka/group-reader.js';
import { createOffsetWriter } from '../adapters/kafka/offset-writer.js';
import { createReconciler } from '../core/reconcile.js';
import { loadReconcileConfig, type ReconcileConfig } from '../platform/config.js';
import { kafkaConnection } from '../platform/kafka-connection.js';
import { log } from '../platform/log.js';

// The composition root of the reconcile functions, built once per container.

async function build(config: ReconcileConfig) {
  const { documents } = createDynamoDbClients({
    endpoint: config.dynamodbEndpoint,
    region: config.region,
    timeoutMs: config.dynamodbTimeoutMs,
  });
  const kafka = createKafkaClient({
    clientId: `tally-reconcile-${process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'local'}`,
    connection: await kafkaConnection(config),
    requestTimeoutMs: config.kafkaRequestTimeoutMs,
    log,
  });
  const source = createGroupSource(kafka);
  const history = createOffsetHistory(documents, config.tables.offsetHistory);
  const reports = createReportStore(documents, config.tables.reconcileReports);
  const reconciler = createReconciler(
    { source, history, reports, mappings: createMappingStore(documents, config.tables.mappings) },
    { windowSize: config.windowSize, graceMs: config.mappingGraceMs },
  );
  return { config, source, history, reports, reconciler, offsets: createOffsetWriter(kafka) };
}

export type ReconcileRuntime = Awaited<ReturnType<typeof build>>;

const config = loadReconcileConfig();
let runtime: Promise<ReconcileRuntime> | undefined;

export function reconcileRuntime(): Promise<ReconcileRuntime> {
  runtime ??= build(config).catch((error: unknown) => {
    runtime = undefined;
    throw error;
  });
  return runtime;
}
