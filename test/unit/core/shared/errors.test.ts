import { describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  ConflictError,
  DependencyFailedError,
  DependencyUnavailableError,
  ForbiddenError,
  GroupNotEmptyError,
  InvalidInputError,
  NotFoundError,
  OverloadedError,
  PayloadTooLargeError,
  TallyError,
  UnauthorizedError,
  UnprocessableInputError,
  UnsupportedMediaTypeError,
  VerificationFailedError,
} from '../../../../functions/core/shared/errors.js';

type ErrorClass = new (
  message: string,
  options?: ConstructorParameters<typeof InvalidInputError>[1],
) => TallyError;

const table: ReadonlyArray<readonly [ErrorClass, string, string, number, boolean]> = [
  [InvalidInputError, 'InvalidInputError', 'INVALID_INPUT', 400, false],
  [UnprocessableInputError, 'UnprocessableInputError', 'UNPROCESSABLE_INPUT', 422, false],
  [PayloadTooLargeError, 'PayloadTooLargeError', 'PAYLOAD_TOO_LARGE', 413, false],
  [UnsupportedMediaTypeError, 'UnsupportedMediaTypeError', 'UNSUPPORTED_MEDIA_TYPE', 415, false],
  [NotFoundError, 'NotFoundError', 'NOT_FOUND', 404, false],
  [UnauthorizedError, 'UnauthorizedError', 'UNAUTHORIZED', 401, false],
  [ForbiddenError, 'ForbiddenError', 'FORBIDDEN', 403, false],
  [ConflictError, 'ConflictError', 'CONFLICT', 409, true],
  [GroupNotEmptyError, 'GroupNotEmptyError', 'GROUP_NOT_EMPTY', 409, true],
  [VerificationFailedError, 'VerificationFailedError', 'VERIFICATION_FAILED', 422, false],
  [OverloadedError, 'OverloadedError', 'OVERLOADED', 429, true],
  [DependencyUnavailableError, 'DependencyUnavailableError', 'DEPENDENCY_UNAVAILABLE', 503, true],
  [DependencyFailedError, 'DependencyFailedError', 'DEPENDENCY_FAILED', 500, true],
  [ConfigurationError, 'ConfigurationError', 'CONFIGURATION', 500, false],
];

describe('TallyError classes', () => {
  it.each(table)(
    '%o has name %s, code %s, status %i, retriable %s',
    (ErrorType, name, code, status, retriable) => {
      const error = new ErrorType('what went wrong');
      expect(error).toBeInstanceOf(Error);
      expect(error).toBeInstanceOf(TallyError);
      expect(error).toBeInstanceOf(ErrorType);
      expect(error.name).toBe(name);
      expect(error.code).toBe(code);
      expect(error.status).toBe(status);
      expect(error.errorCode).toBe(status);
      expect(error.retriable).toBe(retriable);
      expect(error.message).toBe('what went wrong');
      expect(error.field).toBeUndefined();
      expect(error.retryAfterSeconds).toBeUndefined();
      expect(error.cause).toBeUndefined();
    },
  );

  it('lets errorCode override the error_code but not the HTTP status', () => {
    const topic = new NotFoundError('no topic', { errorCode: 40403 });
    expect(topic.errorCode).toBe(40403);
    expect(topic.status).toBe(404);
    const partition = new NotFoundError('no partition', { errorCode: 40402 });
    expect(partition.errorCode).toBe(40402);
    expect(new NotFoundError('no cluster').errorCode).toBe(404);
  });

  it('keeps field, retryAfterSeconds and cause', () => {
    const cause = new Error('root');
    const error = new OverloadedError('busy', {
      field: 'entries[3].value.data',
      retryAfterSeconds: 2,
      cause,
    });
    expect(error.field).toBe('entries[3].value.data');
    expect(error.retryAfterSeconds).toBe(2);
    expect(error.cause).toBe(cause);
  });

  it('has a stack and a name that survives a subclass check by name', () => {
    const error = new ForbiddenError('no');
    expect(error.stack).toContain('ForbiddenError');
    expect(Object.prototype.toString.call(error)).toBe('[object Error]');
    expect(String(error)).toBe('ForbiddenError: no');
  });
});
