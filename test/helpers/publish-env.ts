import { inject } from 'vitest';
import {
  createLocalTables,
  localDynamoDbClient,
  tableEnvironment,
} from '../../infra/local/local-tables.js';
import { testAuthEnv } from './http-event.js';
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
    LOG_LEVEL: 'error',
    ...testAuthEnv(),
    ...extra,
  };
  Object.assign(process.env, env);
  return env;
}
