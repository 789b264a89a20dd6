import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { inject } from 'vitest';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import { type LocalStack, startLocalStack } from '../../infra/local/stack.js';
import { uniqueName } from './unique-name.js';

export interface TestSchemaRegistry {
  /** The Confluent Schema Registry API's base URL. */
  readonly url: string;
  readonly stack: LocalStack;
  stop(): Promise<void>;
}

/**
 * A schema registry for one test file, started when the file asks (files that do not ask pay
 * nothing): TALLY_SCHEMA_REGISTRY_URL's if set, else a local stack over the run's Kafka and
 * DynamoDB that starts only the registry, through the same opt-in `npm start` uses.
 */
export async function startTestSchemaRegistry(): Promise<TestSchemaRegistry> {
  const given = process.env.TALLY_SCHEMA_REGISTRY_URL?.trim();
  const stack = await startLocalStack({
    env: {
      KAFKA_BROKERS: inject('kafkaBrokers'),
      DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
      ...(given && { TALLY_SCHEMA_REGISTRY_URL: given }),
    },
    tablePrefix: `${uniqueName('registry')}-`,
    schemaRegistry: true,
    // The registry's JVM starts in ~10 s alone, slower beside another file's broker.
    startTimeoutMs: 100_000,
  });
  const stop = async () => {
    await stack.stop();
    // The stack made Tally's tables on the shared DynamoDB API; this file uses none of them.
    const client = localDynamoDbClient(stack.dynamodbEndpoint);
    for (const TableName of Object.values(stack.tables)) {
      await client.send(new DeleteTableCommand({ TableName }));
    }
    client.destroy();
  };
  if (stack.schemaRegistryUrl === undefined) {
    await stop();
    throw new Error('the stack started no registry');
  }
  return { url: stack.schemaRegistryUrl, stack, stop };
}

/** A call to the Confluent API: its status and parsed JSON body. */
export async function registryCall(
  url: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: await response.json() };
}
