import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DependencyUnavailableError } from '../../core/errors.js';

export interface DynamoDbOptions {
  /** A local DynamoDB API (dynalite, DynamoDB Local) instead of AWS. */
  readonly endpoint: string | undefined;
  readonly region: string;
  /** Per attempt, connection and answer alike. */
  readonly timeoutMs: number;
}

/**
 * One document client per container. Short timeouts and two attempts: a DynamoDB that does not
 * answer must turn into a clear 503 well inside the request's deadline, not a hang.
 */
export function createDynamoDbClients(options: DynamoDbOptions): {
  readonly client: DynamoDBClient;
  readonly documents: DynamoDBDocumentClient;
} {
  const client = new DynamoDBClient({
    region: options.region,
    maxAttempts: 2,
    requestHandler: {
      connectionTimeout: options.timeoutMs,
      requestTimeout: options.timeoutMs,
      // Without it the SDK only logs a warning when a request outlives requestTimeout and keeps
      // waiting: a stalled DynamoDB would hold the request until Lambda's deadline.
      throwOnRequestTimeout: true,
    },
    ...(options.endpoint && {
      endpoint: options.endpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  });
  const documents = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
  return { client, documents };
}

/**
 * Translates an SDK failure into ours, saying what was being done; the SDK's own message stays
 * in `cause` (logged, not sent to callers).
 */
export function dynamoDbUnavailable(doing: string, error: unknown): DependencyUnavailableError {
  const detail = error instanceof Error ? error.name : 'unknown error';
  return new DependencyUnavailableError(`DynamoDB did not answer while ${doing} (${detail})`, {
    cause: error,
    retryAfterSeconds: 1,
  });
}
