import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Deadline } from '../../core/shared/deadline.js';
import {
  ConfigurationError,
  DependencyRefusedError,
  DependencyUnavailableError,
} from '../../core/shared/errors.js';
import { sdkClientWhere } from '../aws/lazy-sdk-client.js';

export interface DynamoDbOptions {
  /** A local DynamoDB API (dynalite, DynamoDB Local) instead of AWS. */
  readonly endpoint: string | undefined;
  readonly region: string;
  /** Per attempt, connection and answer alike. */
  readonly timeoutMs: number;
}

/**
 * One set of DynamoDB clients per container, sharing connections. Short timeouts and two
 * attempts: a DynamoDB that does not answer must turn into a clear 503 well inside the request's
 * deadline, not a hang; calls on a request's path also get at most its time left (`within`).
 */
export function createDynamoDbClients(options: DynamoDbOptions): {
  readonly documents: DynamoDBDocumentClient;
  /**
   * One attempt per send: for a call that must not be repeated blindly (a sequence allocation
   * applied twice burns seqs), so its adapter retries it itself.
   */
  readonly singleAttempt: DynamoDBDocumentClient;
} {
  const where = sdkClientWhere(options);
  const base = new DynamoDBClient({
    ...where,
    maxAttempts: 2,
    requestHandler: {
      connectionTimeout: options.timeoutMs,
      requestTimeout: options.timeoutMs,
      // Without it the SDK only logs a warning when a request outlives requestTimeout and keeps
      // waiting: a stalled DynamoDB would hold the request until Lambda's deadline.
      throwOnRequestTimeout: true,
    },
  });
  const shared = base.config.requestHandler;
  const once = new DynamoDBClient({ ...where, maxAttempts: 1, requestHandler: shared });
  const translate = { marshallOptions: { removeUndefinedValues: true } };
  return {
    documents: DynamoDBDocumentClient.from(base, translate),
    singleAttempt: DynamoDBDocumentClient.from(once, translate),
  };
}

/**
 * Send options that bound one call by the request's deadline: it gets at most the time left,
 * and is abandoned (AbortError, no SDK retry) when it runs out. Without a deadline (scheduled
 * work) the client's own timeouts bound it.
 */
export function within(deadline: Deadline | undefined): { abortSignal?: AbortSignal } {
  if (deadline === undefined) return {};
  return { abortSignal: AbortSignal.timeout(Math.max(1, deadline.remainingMs())) };
}

/** The call was abandoned because the request's deadline came (see `within`), maybe as a cause. */
export function isDeadlineAbort(error: unknown): boolean {
  for (let e = error as Error | undefined; e instanceof Error; e = e.cause as Error | undefined) {
    if (e.name === 'AbortError') return true;
  }
  return false;
}

/** DynamoDB's answers that mean "not now": retried later, they may pass. */
const THROTTLED = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
]);
/** Refusals that mean the table is not there or not ours to use: the deployment is wrong. */
const MISCONFIGURED = new Set([
  'ResourceNotFoundException',
  'AccessDeniedException',
  'UnrecognizedClientException',
]);

/**
 * Translates an SDK failure into ours, saying what was being done; the SDK's own message stays
 * in `cause` (logged, not sent to callers). No answer or a throttle: 503, retriable. A refusal
 * (4xx) a retry would repeat: 500, not retriable — a missing table or permission says so
 * (ConfigurationError), anything else (an item over 400 KB) is Tally's fault.
 */
export function dynamoDbUnavailable(
  doing: string,
  error: unknown,
): DependencyUnavailableError | DependencyRefusedError | ConfigurationError {
  const name = error instanceof Error ? error.name : 'unknown error';
  const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  const refused = status !== undefined && status >= 400 && status < 500 && !THROTTLED.has(name);
  if (refused && !isDeadlineAbort(error)) {
    const Refusal = MISCONFIGURED.has(name) ? ConfigurationError : DependencyRefusedError;
    return new Refusal(`DynamoDB refused ${doing} (${name})`, { cause: error });
  }
  const detail = isDeadlineAbort(error) ? 'no answer before the request deadline' : name;
  const what = THROTTLED.has(name) ? 'throttled' : 'did not answer while';
  return new DependencyUnavailableError(`DynamoDB ${what} ${doing} (${detail})`, {
    cause: error,
    retryAfterSeconds: 1,
  });
}

/** `work`'s result, or its SDK failure translated (see dynamoDbUnavailable). */
export async function orUnavailable<T>(doing: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw dynamoDbUnavailable(doing, error);
  }
}
