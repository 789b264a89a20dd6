import { createDynamoDbClients } from '../adapters/dynamodb/client.js';
import type { CommonConfig } from './config.js';

/** The DynamoDB clients of one container, for a composition root. */
export function dynamoDbClients(config: CommonConfig) {
  return createDynamoDbClients({
    endpoint: config.dynamodbEndpoint,
    region: config.region,
    timeoutMs: config.dynamodbTimeoutMs,
  });
}
