import { createDynamoDbClients } from '../adapters/dynamodb/client.js';
import type { CommonConfig } from './config.js';
import { tracing } from './tracing.js';

/** The DynamoDB clients of one container, for a composition root (traced with TALLY_TRACING). */
export function dynamoDbClients(config: CommonConfig) {
  const clients = createDynamoDbClients({
    endpoint: config.dynamodbEndpoint,
    region: config.region,
    timeoutMs: config.dynamodbTimeoutMs,
  });
  // A document client shares its client's middleware stack: capturing it traces that client.
  tracing.captureClient(clients.documents);
  tracing.captureClient(clients.singleAttempt);
  return clients;
}
