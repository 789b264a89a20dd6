import { describe, expect, it } from 'vitest';
import {
  type GatewayRequest,
  gatewayAnswers,
  HTTP_API_PAYLOAD_LIMIT_BYTES,
  LAMBDA_REQUEST_LIMIT_BYTES,
  LAMBDA_RESPONSE_LIMIT_BYTES,
  lambdaEventBytes,
  lambdaResultBytes,
  refusalOf,
  refusalOfResult,
} from '../../../../infra/local/gateway-limits.js';

const request = (body: Buffer, headers: Record<string, string> = {}): GatewayRequest => ({
  method: 'POST',
  target: '/v3/clusters/c/topics/t/records?a=1&a=2',
  headers: { 'content-type': 'application/json', cookie: 'x=1; y=2', ...headers },
  body,
});

/** The body length (ASCII) whose event is exactly `bytes` long. */
function bodyForEventOf(bytes: number, headers: Record<string, string> = {}): number {
  return bytes - (lambdaEventBytes(request(Buffer.from('a'), headers)) - 1);
}

describe('the local API gateway limits', () => {
  it('builds the payload 2.0 event API Gateway sends, body escaped, cookies and query apart', () => {
    const small = lambdaEventBytes(request(Buffer.from('{"v":1}')));
    expect(small).toBeGreaterThan(500);
    expect(small).toBeLessThan(1200);
    // A JSON body travels as an escaped string: each quote costs a backslash more.
    expect(lambdaEventBytes(request(Buffer.from('""')))).toBe(
      lambdaEventBytes(request(Buffer.from('aa'))) + 2,
    );
    // A binary body travels base64-encoded: 3 bytes become 4.
    const binary = { 'content-type': 'application/octet-stream' };
    expect(
      lambdaEventBytes(request(Buffer.alloc(3000), binary)) -
        lambdaEventBytes(request(Buffer.alloc(0), binary)),
    ).toBeGreaterThanOrEqual(4000);
  });

  it('lets through an event of exactly 6,291,456 bytes and refuses one byte more with 413', () => {
    const atLimit = bodyForEventOf(LAMBDA_REQUEST_LIMIT_BYTES);
    const fits = request(Buffer.alloc(atLimit, 'a'));
    expect(lambdaEventBytes(fits)).toBe(LAMBDA_REQUEST_LIMIT_BYTES);
    expect(refusalOf(fits)).toBeUndefined();
    const refused = refusalOf(request(Buffer.alloc(atLimit + 1, 'a')));
    expect(refused).toMatchObject({ status: 413, limit: 'lambda-request-payload' });
    expect(JSON.parse(refused?.body ?? '{}')).toMatchObject({
      error_code: 413,
      message: expect.stringMatching(/^Request Entity Too Large: .*6 MB .*6,291,456 bytes/),
      retriable: false,
    });
  });

  it('refuses a body over 10 MiB as the HTTP API payload limit, before Lambda is asked', () => {
    expect(refusalOf(request(Buffer.alloc(HTTP_API_PAYLOAD_LIMIT_BYTES + 1, 'a')))).toBe(
      gatewayAnswers.payloadTooLarge,
    );
    // Under 10 MiB but over Lambda's 6 MiB: still refused, by Lambda's limit.
    expect(refusalOf(request(Buffer.alloc(HTTP_API_PAYLOAD_LIMIT_BYTES, 'a')))).toBe(
      gatewayAnswers.eventTooLarge,
    );
  });

  it('passes a result of 6,291,556 bytes and answers 500 for one byte more', () => {
    const result = (length: number) => ({
      status: 200,
      headers: { 'content-type': 'application/json', 'content-length': '1', date: 'now' },
      body: Buffer.alloc(length, 'b'),
    });
    const atLimit = LAMBDA_RESPONSE_LIMIT_BYTES - (lambdaResultBytes(result(1)) - 1);
    expect(lambdaResultBytes(result(atLimit))).toBe(LAMBDA_RESPONSE_LIMIT_BYTES);
    expect(refusalOfResult(result(atLimit))).toBeUndefined();
    expect(refusalOfResult(result(atLimit + 1))).toEqual({
      status: 500,
      body: '{"message":"Internal Server Error"}',
      limit: 'lambda-response-payload',
    });
    // Transport headers are the server's, not the function's: they do not count.
    expect(
      lambdaResultBytes({ ...result(10), headers: { 'content-type': 'application/json' } }),
    ).toBe(lambdaResultBytes(result(10)));
  });

  it('counts a binary response base64-encoded, as the function had to return it', () => {
    const png = {
      status: 200,
      headers: { 'content-type': 'image/png' },
      body: Buffer.alloc(3000, 'b'),
    };
    const json = { ...png, headers: { 'content-type': 'application/json' } };
    expect(lambdaResultBytes(png) - lambdaResultBytes(json)).toBeGreaterThan(900);
  });
});
