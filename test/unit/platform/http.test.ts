import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createKeyedPublishes } from '../../../functions/adapters/dynamodb/reservations.js';
import { Deadline } from '../../../functions/core/shared/deadline.js';
import {
  ConfigurationError,
  ConflictError,
  DependencyFailedError,
  DependencyUnavailableError,
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  OverloadedError,
  PayloadTooLargeError,
  type TallyError,
  UnprocessableInputError,
  UnsupportedMediaTypeError,
} from '../../../functions/core/shared/errors.js';
import { errorResponse } from '../../../functions/platform/http.js';
import {
  baseUrl,
  bodyBytes,
  type HttpEvent,
  type HttpResponse,
  header,
} from '../../../functions/platform/http-event.js';
import { httpEvent } from '../../helpers/http-event.js';

function bodyOf(response: HttpResponse): Record<string, unknown> {
  expect(response.headers?.['content-type']).toBe('application/json');
  return JSON.parse(String(response.body)) as Record<string, unknown>;
}

/** An event whose headers are exactly `headers` (no lower-casing) and whose domain is `domain`. */
function eventWith(headers: Record<string, string>, domain: string | undefined): HttpEvent {
  const event = httpEvent();
  return {
    ...event,
    headers,
    requestContext: {
      ...event.requestContext,
      ...(domain === undefined ? {} : { domainName: domain }),
    },
  };
}

describe('errorResponse: Tally errors', () => {
  it.each([
    [InvalidInputError, 400, false],
    [UnprocessableInputError, 422, false],
    [PayloadTooLargeError, 413, false],
    [UnsupportedMediaTypeError, 415, false],
    [NotFoundError, 404, false],
    [ForbiddenError, 403, false],
    [ConflictError, 409, true],
    [OverloadedError, 429, true],
    [DependencyUnavailableError, 503, true],
    [DependencyFailedError, 500, true],
    [ConfigurationError, 500, false],
  ] as const)(
    '%o answers %i with its code, message and retriable %s',
    (ErrorType, status, retriable) => {
      const error: TallyError = new ErrorType(`what went wrong (${ErrorType.name})`);

      const response = errorResponse(error, 'req-1');

      expect(response.statusCode).toBe(status);
      expect(bodyOf(response)).toEqual({
        error_code: status,
        message: `what went wrong (${ErrorType.name})`,
        retriable,
      });
      expect(response.headers).not.toHaveProperty('retry-after');
    },
  );

  it('carries the field and a specific error_code', () => {
    const error = new NotFoundError('topic orders not found', {
      field: 'topic_name',
      errorCode: 40403,
    });

    const response = errorResponse(error, 'req-1');

    expect(response.statusCode).toBe(404);
    expect(bodyOf(response)).toEqual({
      error_code: 40403,
      message: 'topic orders not found',
      retriable: false,
      field: 'topic_name',
    });
  });

  it.each([
    [new OverloadedError('busy', { retryAfterSeconds: 1 }), '1'],
    [new DependencyUnavailableError('no metadata', { retryAfterSeconds: 5 }), '5'],
    [new ConflictError('in progress', { retryAfterSeconds: 0 }), '0'],
  ])('sets Retry-After for %o', (error, seconds) => {
    const response = errorResponse(error, 'req-1');

    expect(response.headers?.['retry-after']).toBe(seconds);
    expect(response.statusCode).toBe(error.status);
  });
});

describe('Idempotency-Key store errors, as HTTP', () => {
  // A client whose every call is cut off by the request's deadline (the SDK's bare AbortError).
  const aborted = {
    send: async () => {
      throw Object.assign(new Error('Request aborted'), { name: 'AbortError' });
    },
  } as unknown as DynamoDBDocumentClient;

  it('a key item read cut off by the deadline (bare AbortError) is a retriable 503, not a 500', async () => {
    // Found by fuzzing: Tally-Timeout-Ms of a few ms with an Idempotency-Key.
    const keyed = createKeyedPublishes(aborted, 'keys', 60);
    const error = await keyed.get('k', new Deadline(Date.now() + 5)).catch((e: unknown) => e);

    const response = errorResponse(error, 'req-1');

    expect(response.statusCode).toBe(503);
    const body = bodyOf(response);
    expect(body).toMatchObject({ error_code: 503, retriable: true });
    expect(body.message).toContain('Idempotency-Key');
    expect(body.message).toContain('nothing was sent');
  });

  it('a key in progress is a retriable 409; a key reused for other records a 422', () => {
    const inProgress = errorResponse(new ConflictError('Idempotency-Key: in progress'), 'req-1');
    expect(inProgress.statusCode).toBe(409);
    expect(bodyOf(inProgress)).toMatchObject({ error_code: 409, retriable: true });
    const reused = errorResponse(new UnprocessableInputError('Idempotency-Key: reused'), 'req-1');
    expect(reused.statusCode).toBe(422);
    expect(bodyOf(reused)).toMatchObject({ error_code: 422, retriable: false });
  });
});

describe('errorResponse: anything else', () => {
  it('is a 500 that quotes the request id and not the error', () => {
    const error = new Error('connect ECONNREFUSED 10.0.3.7:9098 password=hunter2');

    const response = errorResponse(error, 'aws-req-42');

    expect(response.statusCode).toBe(500);
    const body = bodyOf(response);
    expect(body).toMatchObject({ error_code: 500, retriable: true });
    expect(String(body.message)).toContain('aws-req-42');
    expect(response.body).not.toContain('ECONNREFUSED');
    expect(response.body).not.toContain('hunter2');
  });

  it.each(['a string', { name: 'IdempotencyValidationError', message: 'not an Error' }, undefined])(
    'treats %o as an internal error',
    (thrown) => {
      const response = errorResponse(thrown, undefined);

      expect(response.statusCode).toBe(500);
      expect(String(bodyOf(response).message)).toContain('unknown');
    },
  );
});

describe('header', () => {
  it('finds a header whatever its case', () => {
    const event = eventWith({ 'Content-Type': 'text/plain', 'x-tally-stream': 's1' }, undefined);

    expect(header(event, 'content-type')).toBe('text/plain');
    expect(header(event, 'CONTENT-TYPE')).toBe('text/plain');
    expect(header(event, 'X-Tally-Stream')).toBe('s1');
    expect(header(event, 'idempotency-key')).toBeUndefined();
  });

  it('copes with an event without headers', () => {
    const event = { ...httpEvent() } as Partial<HttpEvent>;
    delete event.headers;

    expect(header(event as HttpEvent, 'host')).toBeUndefined();
  });
});

describe('bodyBytes', () => {
  it('decodes a base64-encoded body to its bytes', () => {
    const bytes = Buffer.from([0x00, 0xff, 0x7b, 0x22, 0x80]);
    const event = { ...httpEvent(), body: bytes.toString('base64'), isBase64Encoded: true };

    expect(bodyBytes(event)).toEqual(bytes);
  });

  it('encodes a text body as UTF-8', () => {
    const event = { ...httpEvent({ body: '{"value":"é€"}' }), isBase64Encoded: false };

    expect(bodyBytes(event)).toEqual(Buffer.from('{"value":"é€"}', 'utf8'));
  });

  it('is empty without a body', () => {
    expect(bodyBytes(httpEvent()).length).toBe(0);
  });
});

describe('baseUrl', () => {
  it('uses the API Gateway domain over https', () => {
    const event = eventWith(
      { host: 'ignored.example' },
      'abc123.execute-api.eu-west-1.amazonaws.com',
    );

    expect(baseUrl(event)).toBe('https://abc123.execute-api.eu-west-1.amazonaws.com');
  });

  it('uses the Host header over http behind serverless-offline', () => {
    const event = eventWith({ host: '127.0.0.1:3000' }, 'offlineContext_domainName');

    expect(baseUrl(event)).toBe('http://127.0.0.1:3000');
  });

  it.each(['localhost:3000', '[::1]:3000'])('treats %s as local (http)', (host) => {
    expect(baseUrl(eventWith({ Host: host }, 'offlineContext_domainName'))).toBe(`http://${host}`);
  });

  it('follows x-forwarded-proto', () => {
    const local = eventWith(
      { host: '127.0.0.1:3000', 'x-forwarded-proto': 'https' },
      'offlineContext_domainName',
    );
    const gateway = eventWith({ 'X-Forwarded-Proto': 'http' }, 'api.example.com');

    expect(baseUrl(local)).toBe('https://127.0.0.1:3000');
    expect(baseUrl(gateway)).toBe('http://api.example.com');
  });

  it('is empty with neither a domain nor a Host header', () => {
    expect(baseUrl(eventWith({}, 'offlineContext_domainName'))).toBe('');
  });
});

describe('errorResponse for a Lambda about to time out', () => {
  it("answers middy's early timeout with 504 UNKNOWN, not a bare 500", () => {
    const error = Object.assign(new Error('[AbortError]: The operation was aborted.'), {
      name: 'TimeoutError',
    });
    const response = errorResponse(error, 'req-1');
    expect(response.statusCode).toBe(504);
    expect(JSON.parse(response.body as string)).toMatchObject({
      error_code: 504,
      outcome: 'UNKNOWN',
      retriable: true,
    });
  });
});
