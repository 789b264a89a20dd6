import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { Kafka, logLevel } from 'kafkajs';
import { localDynamoDbClient } from './local-tables.js';

export interface WaitOptions {
  readonly timeoutMs: number;
  /** Rejects the wait early, e.g. when the server process exits. */
  readonly abandonWhen?: Promise<never>;
}

async function poll<T>(what: string, attempt: () => Promise<T>, options: WaitOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  let abandoned: unknown;
  options.abandonWhen?.catch((error: unknown) => {
    abandoned = error;
  });
  const abandon = options.abandonWhen ?? new Promise<never>(() => {});
  while (Date.now() < deadline) {
    if (abandoned !== undefined) throw abandoned;
    try {
      return await Promise.race([attempt(), abandon]);
    } catch (error) {
      if (abandoned !== undefined) throw abandoned;
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} did not answer within ${options.timeoutMs} ms: ${String(lastError)}`, {
    cause: lastError,
  });
}

/** Waits until the broker answers a metadata call; returns the cluster id it reports. */
export async function waitForKafka(bootstrap: string, options: WaitOptions): Promise<string> {
  const kafka = new Kafka({
    clientId: 'tally-local-readiness',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 2000,
    retry: { retries: 0 },
  });
  return poll(
    `Kafka at ${bootstrap}`,
    async () => {
      const admin = kafka.admin();
      try {
        await admin.connect();
        const cluster = await admin.describeCluster();
        if (cluster.brokers.length === 0) throw new Error('no broker registered yet');
        await admin.listTopics();
        return cluster.clusterId;
      } finally {
        await admin.disconnect();
      }
    },
    options,
  );
}

/** Waits until the endpoint answers ListTables. */
export async function waitForDynamoDb(endpoint: string, options: WaitOptions): Promise<void> {
  const client = localDynamoDbClient(endpoint);
  try {
    await poll(
      `DynamoDB at ${endpoint}`,
      async () => client.send(new ListTablesCommand({ Limit: 1 })),
      options,
    );
  } finally {
    client.destroy();
  }
}

/** Waits until a Confluent-API schema registry (`…/apis/ccompat/v7`) lists its subjects. */
export async function waitForSchemaRegistry(
  confluentApiUrl: string,
  options: WaitOptions,
): Promise<void> {
  await poll(
    `schema registry at ${confluentApiUrl}`,
    async () => {
      const response = await fetch(`${confluentApiUrl}/subjects`, {
        signal: AbortSignal.timeout(2000),
      });
      if (!response.ok) throw new Error(`GET /subjects answered ${response.status}`);
      if (!Array.isArray(await response.json())) throw new Error('GET /subjects: not a list');
    },
    options,
  );
}
