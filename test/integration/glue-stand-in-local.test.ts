import { GetRegistryCommand, GlueClient } from '@aws-sdk/client-glue';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../infra/local/stack.js';

// `TALLY_SCHEMA_REGISTRY=glue npm start`: the local stack serves the Glue stand-in instead of
// starting Apicurio, with the registry TALLY_GLUE_REGISTRY_NAME names, and hands the API its
// endpoint. (The shared broker and DynamoDB API are reused through KAFKA_BROKERS/DYNAMODB_ENDPOINT.)

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({
    env: {
      KAFKA_BROKERS: inject('kafkaBrokers'),
      DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
      TALLY_SCHEMA_REGISTRY: 'glue',
      TALLY_GLUE_REGISTRY_NAME: 'local-orders',
    },
    tablePrefix: `glue-stack-${Date.now().toString(36)}-`,
  });
});
afterAll(() => stack?.stop());

describe('local stack with Glue selected', () => {
  it('serves the Glue API with the named registry, starts no Confluent registry, says so when ready', async () => {
    expect(stack.schemaRegistryUrl).toBeUndefined();
    expect(stack.processes.map((p) => p.name)).not.toContain('schema registry (Apicurio)');
    expect(stack.readyLine()).toContain(`glue=${stack.glueEndpoint}`);
    const client = new GlueClient({
      region: 'us-east-1',
      endpoint: stack.glueEndpoint as string,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    try {
      const registry = await client.send(
        new GetRegistryCommand({ RegistryId: { RegistryName: 'local-orders' } }),
      );
      expect(registry).toMatchObject({ RegistryName: 'local-orders', Status: 'AVAILABLE' });
      const other = await client
        .send(new GetRegistryCommand({ RegistryId: { RegistryName: 'default-registry' } }))
        .catch((e: Error) => e.name);
      expect(other).toBe('EntityNotFoundException');
    } finally {
      client.destroy();
    }
  });
});
