// Typed errors shared by every function. `name` is stable (Step Functions Retry/Catch match on
// it), `status` is the HTTP status, `errorCode` the Confluent-style error_code in bodies.
// Messages are written for the caller: a 4xx names the field at fault, a 5xx says what is known
// about the outcome ("nothing was sent"). Vendor error text stays in `cause`, which is logged.

export interface TallyErrorOptions {
  readonly cause?: unknown;
  /** The input field at fault, e.g. `entries[3].value.data`. */
  readonly field?: string;
  readonly errorCode?: number;
  /** Seconds after which a retry may succeed (Retry-After). */
  readonly retryAfterSeconds?: number;
}

export abstract class TallyError extends Error {
  abstract readonly code: string;
  abstract readonly status: number;
  abstract readonly retriable: boolean;
  readonly field: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly #errorCode: number | undefined;

  constructor(message: string, options: TallyErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.field = options.field;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.#errorCode = options.errorCode;
  }

  get errorCode(): number {
    return this.#errorCode ?? this.status;
  }
}

/** Malformed or invalid input (400). The message names the field. */
export class InvalidInputError extends TallyError {
  readonly code = 'INVALID_INPUT';
  readonly status = 400;
  readonly retriable = false;
}

/** Well-formed input that cannot be processed as a whole (422): nothing was produced. */
export class UnprocessableInputError extends TallyError {
  readonly code = 'UNPROCESSABLE_INPUT';
  readonly status = 422;
  readonly retriable = false;
}

/**
 * A key or value that needs a schema (AVRO, PROTOBUF, JSONSCHEMA, or no type at all) while no
 * schema registry is configured: REST Proxy's answer is 422 with its code 42206 in the message
 * ("Error: 42206 : Payload error. …", SchemaManagerThrowing.java, ProduceActionTest.java).
 */
export class SchemaRegistryMissingError extends TallyError {
  readonly code = 'SCHEMA_REGISTRY_MISSING';
  readonly status = 422;
  readonly retriable = false;
}

export class PayloadTooLargeError extends TallyError {
  readonly code = 'PAYLOAD_TOO_LARGE';
  readonly status = 413;
  readonly retriable = false;
}

export class UnsupportedMediaTypeError extends TallyError {
  readonly code = 'UNSUPPORTED_MEDIA_TYPE';
  readonly status = 415;
  readonly retriable = false;
}

/** Unknown cluster (404), partition (40402) or topic (40403), or route. */
export class NotFoundError extends TallyError {
  readonly code = 'NOT_FOUND';
  readonly status = 404;
  readonly retriable = false;
}

/** What was asked for existed and is no longer kept (410): e.g. a ledger record past its retention. */
export class GoneError extends TallyError {
  readonly code = 'GONE';
  readonly status = 410;
  readonly retriable = false;
}

/** No credentials, or credentials that are not valid (401). */
export class UnauthorizedError extends TallyError {
  readonly code = 'UNAUTHORIZED';
  readonly status = 401;
  readonly retriable = false;
}

/** Internal topics, topics outside the allow-list (403). */
export class ForbiddenError extends TallyError {
  readonly code = 'FORBIDDEN';
  readonly status = 403;
  readonly retriable = false;
}

/** The same Idempotency-Key is being processed by another request (409). */
export class ConflictError extends TallyError {
  readonly code = 'CONFLICT';
  readonly status = 409;
  readonly retriable = true;
}

/**
 * A consumer group still has members, so its offsets cannot be changed (409). Retriable: the
 * offset-repair workflow waits (Retry with backoff) for its consumers to stop.
 */
export class GroupNotEmptyError extends TallyError {
  readonly code = 'GROUP_NOT_EMPTY';
  readonly status = 409;
  readonly retriable = true;
}

/** A workflow's check found records not acknowledged or not present exactly once (422). */
export class VerificationFailedError extends TallyError {
  readonly code = 'VERIFICATION_FAILED';
  readonly status = 422;
  readonly retriable = false;
}

/** This container cannot take more work right now (429): nothing was sent. */
export class OverloadedError extends TallyError {
  readonly code = 'OVERLOADED';
  readonly status = 429;
  readonly retriable = true;
}

/** A dependency (DynamoDB, Kafka) could not be reached before anything was sent (503). */
export class DependencyUnavailableError extends TallyError {
  readonly code = 'DEPENDENCY_UNAVAILABLE';
  readonly status = 503;
  readonly retriable = true;
}

/** A dependency failed after work had started; what is known is in the message (500). */
export class DependencyFailedError extends TallyError {
  readonly code = 'DEPENDENCY_FAILED';
  readonly status = 500;
  readonly retriable = true;
}

/**
 * A dependency answered, and refused the call in a way a retry does not change (a DynamoDB
 * ValidationException: an item over 400 KB, a malformed key). A fault on Tally's side (500).
 */
export class DependencyRefusedError extends TallyError {
  readonly code = 'DEPENDENCY_REFUSED';
  readonly status = 500;
  readonly retriable = false;
}

/** Configuration that cannot work; thrown at cold start so the function fails loudly. */
export class ConfigurationError extends TallyError {
  readonly code = 'CONFIGURATION';
  readonly status = 500;
  readonly retriable = false;
}
