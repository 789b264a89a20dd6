import { describe, expect, it } from 'vitest';
import { dynamoDbUnavailable } from '../../../../functions/adapters/dynamodb/client.js';

// What a caller is told when a DynamoDB call fails: no answer or a throttle is worth retrying
// (503); a refusal is not — DynamoDB answered, and will answer the same again.

const sdkError = (name: string, httpStatusCode?: number) =>
  Object.assign(new Error(`${name} happened`), {
    name,
    ...(httpStatusCode !== undefined && { $metadata: { httpStatusCode } }),
  });

describe('dynamoDbUnavailable', () => {
  it.each([
    ['TimeoutError', undefined, 'did not answer while'],
    ['InternalServerError', 500, 'did not answer while'],
    ['ProvisionedThroughputExceededException', 400, 'throttled'],
    ['ThrottlingException', 400, 'throttled'],
  ])('%s (%s) is a retriable 503', (name, status, words) => {
    const error = dynamoDbUnavailable('writing x', sdkError(name, status));
    expect(error).toMatchObject({ name: 'DependencyUnavailableError', status: 503 });
    expect(error.retriable).toBe(true);
    expect(error.message).toBe(`DynamoDB ${words} writing x (${name})`);
  });

  it('calls a deadline abort what it is: no answer in time', () => {
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    const error = dynamoDbUnavailable('writing x', abort);
    expect(error.message).toBe(
      'DynamoDB did not answer while writing x (no answer before the request deadline)',
    );
    expect(error.status).toBe(503);
  });

  it('reports a ValidationException (an item over 400 KB) as a refusal: 500, not retriable', () => {
    const error = dynamoDbUnavailable('writing x', sdkError('ValidationException', 400));
    expect(error).toMatchObject({
      name: 'DependencyRefusedError',
      status: 500,
      retriable: false,
      message: 'DynamoDB refused writing x (ValidationException)',
    });
  });

  it('reports a missing table or permission as configuration: 500, not retriable', () => {
    for (const name of ['ResourceNotFoundException', 'AccessDeniedException']) {
      const error = dynamoDbUnavailable('writing x', sdkError(name, 400));
      expect(error).toMatchObject({ name: 'ConfigurationError', status: 500, retriable: false });
    }
  });
});
