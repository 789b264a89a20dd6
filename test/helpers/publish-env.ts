import { afterAll, beforeAll, inject } from 'vitest';
import {
  createLocalTables,
  localDynamoDbClient,
  tableEnvironment,
} from '../../infra/local/local-tables.js';
import { testAuthEnv } from './http-event.js';
import { testKafka } from './kafka.js';
import { loadHandlers } from './publish-client.js';
import { uniqueName } from './unique-name.js';

/**
 * Fresh tables for one test file and the environment the publish functions read. Call before
 * importing a handler: configuration is read when the module loads, as in Lambda.
 */
export async function usePublishEnv(
  extra: Record<string, string> = {},
): Promise<Record<string, string>> {
  const client = localDynamoDbClient(inject('dynamodbEndpoint'));
  const tables = await createLocalTables(client, `${uniqueName('pub')}-`);
  client.destroy();
  const env = {
    KAFKA_BROKERS: inject('kafkaBrokers'),
    DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
    ...tableEnvironment(tables),
    AWS_REGION: 'us-east-1',
    ...testAuthEnv(),
    ...extra,
  };
  Object.assign(process.env, env);
  return env;
}

/**
 * A describe block's publish setup: fresh tables and environment, an admin client connected for
 * the block, and the publish handlers of one module instance; `ctx.api` is set before the tests.
 */
export function usePublishApi(clientId: string, extra: Record<string, string> = {}) {
  const ctx = {
    admin: testKafka(clientId).admin(),
    api: undefined as unknown as Awaited<ReturnType<typeof loadHandlers>>,
  };
  beforeAll(async () => {
    await usePublishEnv(extra);
    await ctx.admin.connect();
    ctx.api = await loadHandlers();
  });
  afterAll(() => ctx.admin.disconnect());
  return ctx;
}
