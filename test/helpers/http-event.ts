import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';

/** The bearer token every test request carries unless it says otherwise (caller "test", admin). */
export const TEST_TOKEN = 'tally-test-token-admin-0001';

/** The authentication configuration that accepts TEST_TOKEN (and the narrower test tokens). */
export function testAuthEnv(): Record<string, string> {
  return {
    TALLY_AUTH: 'tokens',
    TALLY_AUTH_TOKENS: JSON.stringify({
      [TEST_TOKEN]: { caller: 'test', scopes: ['admin'], topics: ['*'] },
      'tally-test-token-reader-0001': { caller: 'reader', scopes: ['read'] },
      'tally-test-token-orders-0001': {
        caller: 'orders-publisher',
        scopes: ['publish'],
        topics: ['orders*'],
      },
    }),
  };
}

export interface EventOptions {
  readonly routeKey?: string;
  readonly pathParameters?: Record<string, string>;
  readonly headers?: Record<string, string>;
  readonly query?: Record<string, string>;
  readonly body?: string;
}

/** An API Gateway HTTP API (payload 2.0) event, as API Gateway would build it. */
export function httpEvent(options: EventOptions = {}): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: options.routeKey ?? 'POST /test',
    rawPath: '/test',
    rawQueryString: new URLSearchParams(options.query ?? {}).toString(),
    headers: Object.fromEntries(
      Object.entries({
        'content-type': 'application/json',
        authorization: `Bearer ${TEST_TOKEN}`,
        ...options.headers,
      }).map(([k, v]) => [k.toLowerCase(), v]),
    ),
    ...(options.query && { queryStringParameters: options.query }),
    ...(options.pathParameters && { pathParameters: options.pathParameters }),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: 'POST',
        path: '/test',
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: 'test',
      },
      requestId: `req-${Math.random().toString(36).slice(2)}`,
      routeKey: options.routeKey ?? 'POST /test',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    ...(options.body !== undefined && { body: options.body }),
    isBase64Encoded: false,
  };
}

/** A Lambda context with `remainingMs` left when the invocation starts. */
export function lambdaContext(remainingMs = 29_000): Context {
  const end = Date.now() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'tally-test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:tally-test',
    memoryLimitInMB: '512',
    awsRequestId: `aws-${Math.random().toString(36).slice(2)}`,
    logGroupName: 'test',
    logStreamName: 'test',
    getRemainingTimeInMillis: () => Math.max(0, end - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}
