import { gunzipSync, gzipSync } from 'node:zlib';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import type { Deadline } from '../../core/deadline.js';
import { ConflictError, UnprocessableInputError } from '../../core/errors.js';
import { dynamoDbUnavailable, isDeadlineAbort, underDeadline } from './client.js';

/** What a request produced, and whether it may be stored as the answer to every retry. */
export interface IdempotentWork<T> {
  readonly response: T;
  /** False while any record is NOT_SENT or UNKNOWN: a retry must be able to send again. */
  readonly settled: boolean;
}

/**
 * Powertools' idempotency errors as ours, so HTTP callers and Step Functions (by the stable
 * error name) get the same answer: a request with the key still running is a retriable
 * conflict; the key reused for a different request cannot be processed.
 */
export function idempotencyError(error: unknown): unknown {
  const name = (error as Error | null)?.name;
  if (name === 'IdempotencyAlreadyInProgressError') {
    return new ConflictError(
      'Idempotency-Key: a request with this key is still in progress; retry later',
      { field: 'Idempotency-Key', cause: error },
    );
  }
  if (name === 'IdempotencyValidationError') {
    return new UnprocessableInputError(
      'Idempotency-Key: this key was already used for a different request',
      { field: 'Idempotency-Key', cause: error },
    );
  }
  // Its store did not answer (in time) before the work ran: nothing was sent. A call cut off by
  // the request's deadline reaches here as the SDK's bare AbortError.
  if (name === 'IdempotencyPersistenceLayerError' || isDeadlineAbort(error)) {
    return dynamoDbUnavailable('checking the Idempotency-Key; nothing was sent', error);
  }
  return error;
}

/**
 * Responses above this are stored gzipped (base64) as Powertools' record: a 1,000-entry batch
 * answer with long ids, stream and key is ~590 KB of JSON, over DynamoDB's 400 KB item, and a
 * record that cannot be stored stays "in progress" — every retry a 409 until it expires.
 */
const PACK_ABOVE = 64 * 1024;

interface Packed {
  readonly tallyGzip: string;
}

function pack<T>(response: T): T | Packed {
  const json = JSON.stringify(response);
  return json.length > PACK_ABOVE ? { tallyGzip: gzipSync(json).toString('base64') } : response;
}

function unpack<T>(stored: T | Packed): T {
  const zipped = (stored as Partial<Packed> | null)?.tallyGzip;
  return typeof zipped === 'string'
    ? (JSON.parse(gunzipSync(Buffer.from(zipped, 'base64')).toString('utf8')) as T)
    : (stored as T);
}

class Unsettled<T> extends Error {
  constructor(readonly response: T) {
    super('outcome not settled: not stored as the idempotent response');
  }
}

/**
 * Idempotency-Key handling on top of Powertools (DynamoDB persistence): a completed request's
 * response is returned again without producing, a different body under the same key is refused
 * (UnprocessableInputError, 422), a concurrent repeat is refused (ConflictError, 409).
 * Extension: a request whose outcome is not settled is not stored, so its retry runs again — with
 * the same sequence numbers, which the reservations table keeps. Powertools' own DynamoDB calls
 * get at most the time left before the request's deadline, as every other call does.
 */
export function createIdempotencyGuard(
  client: DynamoDBClient,
  tableName: string,
  ttlSeconds: number,
) {
  const persistenceStore = new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: client });

  return async function once<T>(
    key: string,
    fingerprint: string,
    context: Context | undefined,
    deadline: Deadline,
    work: () => Promise<IdempotentWork<T>>,
  ): Promise<T> {
    const config = new IdempotencyConfig({
      eventKeyJmesPath: 'key',
      payloadValidationJmesPath: 'fingerprint',
      expiresAfterSeconds: ttlSeconds,
      throwOnNoIdempotencyKey: true,
    });
    if (context?.getRemainingTimeInMillis) config.registerLambdaContext(context);
    let produced: IdempotentWork<T> | undefined;
    let failed: { error: unknown } | undefined;
    const run = makeIdempotent(
      async (_input: { key: string; fingerprint: string }) => {
        produced = await work().catch((error: unknown) => {
          failed = { error };
          throw error;
        });
        if (!produced.settled) throw new Unsettled(produced.response);
        return pack(produced.response);
      },
      { persistenceStore, config },
    );
    try {
      return unpack((await underDeadline(deadline, () => run({ key, fingerprint }))) as T | Packed);
    } catch (error) {
      // The records' fate is known even when Powertools could not store or clear its record.
      if (error instanceof Unsettled) return error.response as T;
      if (produced !== undefined) return produced.response;
      // The work's own failure, even when Powertools then could not clear its record in time.
      if (failed !== undefined) throw failed.error;
      throw idempotencyError(error);
    }
  };
}
