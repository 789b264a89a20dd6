// What API Gateway (HTTP API, payload 2.0) and Lambda refuse, as pure rules, so the local API
// fails where AWS would. serverless-offline alone accepts a 10 MiB body whatever the Lambda
// limit, passes any response size and, with --noTimeout, waits for a function forever.

/** HTTP API's "Payload size: 10 MB" (API Gateway counts it as 10,485,760 bytes). */
export const HTTP_API_PAYLOAD_LIMIT_BYTES = 10 * 1024 * 1024;
/** Lambda Invoke: "Request must be smaller than 6291456 bytes for the InvokeFunction operation". */
export const LAMBDA_REQUEST_LIMIT_BYTES = 6 * 1024 * 1024;
/** Lambda's runtime API: "Exceeded maximum allowed payload size (6291556 bytes)". */
export const LAMBDA_RESPONSE_LIMIT_BYTES = 6 * 1024 * 1024 + 100;
/**
 * The integration timeout the issue asks for. HTTP API allows up to 30 s (serverless v3 deploys
 * 30,000 ms); 29 s keeps local runs one second stricter and matches the functions' own deadline.
 */
export const GATEWAY_TIMEOUT_MS = 29_000;

/** Which rule refused a request; sent locally as `x-local-gateway-limit` to help a reader. */
export type GatewayLimit =
  | 'http-api-payload'
  | 'lambda-request-payload'
  | 'lambda-response-payload'
  | 'integration-timeout'
  | 'integration-failure'
  | 'route-not-found'
  | 'method-not-allowed';

export interface GatewayAnswer {
  readonly status: number;
  readonly body: string;
  readonly limit: GatewayLimit;
  /** More response headers (405's `Allow`). */
  readonly headers?: Readonly<Record<string, string>>;
}

function answer(status: number, message: string, limit: GatewayLimit): GatewayAnswer {
  return { status, body: JSON.stringify({ message }), limit };
}

/**
 * A refusal of the request itself, in Tally's error shape: AWS's words first (API Gateway answers
 * `{"message":"Request Entity Too Large"}` alone), then the limit and what to do.
 */
function tooLarge(message: string, limit: GatewayLimit): GatewayAnswer {
  const body = {
    error_code: 413,
    message: `Request Entity Too Large: ${message}`,
    retriable: false,
  };
  return { status: 413, body: JSON.stringify(body), limit };
}

/** HTTP API's own answers: a JSON `message`, as its default gateway responses have. */
export const gatewayAnswers = {
  payloadTooLarge: tooLarge(
    "the body is over API Gateway HTTP API's 10 MB payload limit (10,485,760 bytes); send the records in several smaller requests",
    'http-api-payload',
  ),
  eventTooLarge: tooLarge(
    "the request is over Lambda's 6 MB invoke payload limit (6,291,456 bytes for the event: body, headers and request context); send the records in several smaller requests",
    'lambda-request-payload',
  ),
  // A failed Lambda integration (here: Function.ResponseSizeTooLarge) is a 500 on HTTP APIs.
  resultTooLarge: answer(500, 'Internal Server Error', 'lambda-response-payload'),
  timedOut: answer(503, 'Service Unavailable', 'integration-timeout'),
  integrationFailed: answer(500, 'Internal Server Error', 'integration-failure'),
} as const;

export type Headers = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface GatewayRequest {
  readonly method: string;
  /** Path and query, as on the request line. */
  readonly target: string;
  readonly headers: Headers;
  readonly body: Buffer;
}

export interface IntegrationResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Buffer;
}

// The content types serverless-offline (like API Gateway for binary media) passes base64-encoded.
const BINARY_TYPES = ['application/octet-stream', 'multipart/form-data'];
const TEXT_TYPES =
  /^(text\/|application\/(json|javascript|xml|x-www-form-urlencoded)|[^;]*\+json)/i;
// Connection-level headers a Lambda result does not carry; the HTTP server adds them.
const TRANSPORT_HEADERS = new Set([
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
]);

function joined(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.join(',');
}

function text(
  body: Buffer,
  binary: boolean,
): { body: string | undefined; isBase64Encoded: boolean } {
  if (body.length === 0) return { body: undefined, isBase64Encoded: false };
  return binary
    ? { body: body.toString('base64'), isBase64Encoded: true }
    : { body: body.toString('utf8'), isBase64Encoded: false };
}

/**
 * Bytes of the payload 2.0 event API Gateway would send Lambda for this request: its JSON with
 * the body escaped (or base64-encoded), headers, cookies and query; requestContext filled with
 * values of AWS's lengths. Within a few hundred bytes of AWS's (route key and path parameters
 * are counted as the raw path; a JWT's claims are not there locally).
 */
export function lambdaEventBytes(request: GatewayRequest): number {
  const url = new URL(request.target, 'http://localhost');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    const lower = name.toLowerCase();
    const flat = joined(value);
    if (flat !== undefined && lower !== 'cookie') headers[lower] = flat;
  }
  const cookies = joined(request.headers.cookie)?.split(/;\s*/);
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) {
    query[key] = query[key] === undefined ? value : `${query[key]},${value}`;
  }
  const contentType = headers['content-type'] ?? '';
  const routeKey = `${request.method} ${url.pathname}`;
  const event = {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies && { cookies }),
    headers,
    ...(url.search && { queryStringParameters: query }),
    requestContext: {
      accountId: '123456789012',
      apiId: 'abcdefghij',
      domainName: 'abcdefghij.execute-api.eu-west-1.amazonaws.com',
      domainPrefix: 'abcdefghij',
      http: {
        method: request.method,
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: '203.0.113.255',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: 'Abcdefghijklmno=',
      routeKey,
      stage: '$default',
      time: '30/Nov/2026:18:00:00 +0000',
      timeEpoch: 1_796_000_000_000,
    },
    pathParameters: { path: url.pathname },
    ...text(
      request.body,
      BINARY_TYPES.some((type) => contentType.includes(type)),
    ),
  };
  return Buffer.byteLength(JSON.stringify(event));
}

/**
 * Bytes of the result a function returned for this HTTP response: `{statusCode, headers, body,
 * isBase64Encoded}`, the body as text for textual content types, otherwise base64.
 */
export function lambdaResultBytes(response: IntegrationResponse): number {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    const flat = joined(value);
    if (flat !== undefined && !TRANSPORT_HEADERS.has(name.toLowerCase())) headers[name] = flat;
  }
  const contentType = joined(response.headers['content-type']) ?? 'application/json';
  const result = {
    statusCode: response.status,
    headers,
    ...text(response.body, !TEXT_TYPES.test(contentType)),
  };
  return Buffer.byteLength(JSON.stringify(result));
}

/** The gateway's refusal of a request before any function runs, if it refuses it. */
export function refusalOf(request: GatewayRequest): GatewayAnswer | undefined {
  if (request.body.length > HTTP_API_PAYLOAD_LIMIT_BYTES) return gatewayAnswers.payloadTooLarge;
  if (lambdaEventBytes(request) > LAMBDA_REQUEST_LIMIT_BYTES) return gatewayAnswers.eventTooLarge;
  return undefined;
}

/** The gateway's answer in place of a function's response, if it cannot pass it on. */
export function refusalOfResult(response: IntegrationResponse): GatewayAnswer | undefined {
  return lambdaResultBytes(response) > LAMBDA_RESPONSE_LIMIT_BYTES
    ? gatewayAnswers.resultTooLarge
    : undefined;
}
