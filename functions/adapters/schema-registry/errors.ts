// What can go wrong between a record, its schema and the registry, as the rest of Tally's typed
// errors: a record that does not match is the caller's 400 naming the field; a schema the
// registry does not know or will not take is the caller's too; a registry that cannot be
// reached is retriable, and nothing was sent.
import {
  DependencyRefusedError,
  DependencyUnavailableError,
  InvalidInputError,
  NotFoundError,
  UnprocessableInputError,
} from '../../core/shared/errors.js';

/** The value does not match its schema; `field` is the path to the first mismatch. */
export class SchemaValidationError extends InvalidInputError {}

/** The registry has no such schema id, subject or version (its own error_code: 404xx). */
export class SchemaNotFoundError extends NotFoundError {}

/** The registry refused to register an inline schema: not a schema (42201), or incompatible (409). */
export class SchemaRefusedError extends UnprocessableInputError {}

/** The registry did not answer, or answered 5xx or 429: a retry may succeed. */
export class SchemaRegistryUnavailableError extends DependencyUnavailableError {}

/** The registry refused Tally itself (401/403): its credentials are wrong; retrying will not help. */
export class SchemaRegistryAccessError extends DependencyRefusedError {}

/** A schema Tally cannot compile: not parseable, or with references, which are not resolved. */
export class UnsupportedSchemaError extends UnprocessableInputError {}
