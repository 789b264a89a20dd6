import { createDynamoDbClients } from '../adapters/dynamodb/client.js';
import { createReceiptsStore } from '../adapters/dynamodb/receipts-store.js';
import { createKafkaClient } from '../adapters/kafka/client.js';
import { createClusterIdentity } from '../adapters/kafka/cluster-identity.js';
import { loadReceiptsConfig, type ReceiptsConfig } from '../platform/config.js';
import { kafkaConnection } from '../platform/kafka-connection.js';
import { log } from '../platform/log.js';

// The composition root of the receipts functions, built once per container.

async function build(config: ReceiptsConfig) {
  const { documents } = createDynamoDbClients({
    endpoint: config.dynamodbEndpoint,
    region: config.region,
    timeoutMs: config.dynamodbTimeoutMs,
  });
  const kafka = createKafkaClient({
    clientId: `tally-receipts-${process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'local'}`,
    connection: await kafkaConnection(config),
    requestTimeoutMs: config.kafkaRequestTimeoutMs,
    log,
  });
  return {
    store: createReceiptsStore(documents, config.receiptsTable),
    clusterId: createClusterIdentity(kafka),
  };
}

const config = loadReceiptsConfig();
let runtime: ReturnType<typeof build> | undefined;

export function receiptsRuntime() {
  runtime ??= build(config).catch((error: unknown) => {
    runtime = undefined;
    throw error;
  });
  return runtime;
}
