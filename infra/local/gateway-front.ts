import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  GATEWAY_TIMEOUT_MS,
  type GatewayAnswer,
  gatewayAnswers,
  HTTP_API_PAYLOAD_LIMIT_BYTES,
  type IntegrationResponse,
  refusalOf,
  refusalOfResult,
} from './gateway-limits.js';
import { type RouteKey, routeRefusal } from './gateway-routes.js';

export interface GatewayFrontOptions {
  /** The HTTP API behind it (serverless-offline), `http://127.0.0.1:<port>`. */
  readonly upstream: string;
  readonly host?: string;
  /** 0 (the default) for a free port. */
  readonly port?: number;
  /** Integration timeout; GATEWAY_TIMEOUT_MS unless a test wants a short one. */
  readonly timeoutMs?: number;
  /**
   * The routes the API has (readHttpRoutes()): another path answers 404, another method 405,
   * without calling the API behind. Undefined: every request is passed on.
   */
  readonly routes?: readonly RouteKey[];
}

export interface GatewayFront {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  close(): Promise<void>;
}

/** Reads the whole body, keeping no more than the gateway would accept. */
async function readBody(request: IncomingMessage): Promise<Buffer | 'too large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Drained to the end even when too large: answering mid-upload makes clients see a reset.
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= HTTP_API_PAYLOAD_LIMIT_BYTES) chunks.push(chunk);
  }
  return size > HTTP_API_PAYLOAD_LIMIT_BYTES ? 'too large' : Buffer.concat(chunks);
}

/** Headers without how the body was framed on one connection (the front re-frames it). */
function withoutFraming(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { 'transfer-encoding': _te, connection: _c, 'keep-alive': _k, ...rest } = headers;
  return rest;
}

function send(response: ServerResponse, answer: GatewayAnswer): void {
  if (response.headersSent) return;
  response.writeHead(answer.status, {
    'content-type': 'application/json',
    'x-local-gateway-limit': answer.limit,
    ...answer.headers,
  });
  response.end(answer.body);
}

/** Calls the HTTP API behind; rejects on a connection failure or when `signal` aborts. */
function forward(
  upstream: URL,
  request: IncomingMessage,
  body: Buffer,
  signal: AbortSignal,
): Promise<IntegrationResponse & { readonly headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      new URL(request.url ?? '/', upstream),
      {
        method: request.method,
        headers: {
          // The caller's Host is kept: the functions build their `self` links from it, as
          // from API Gateway's domainName in AWS.
          ...withoutFraming(request.headers),
          host: request.headers.host ?? upstream.host,
          'content-length': body.length,
          // serverless-offline (hapi) gzips an answer over 1 KB for a caller that accepts gzip:
          // the front would then measure the compressed bytes and let a 7 MB answer through
          // (issue 31). A Lambda result is never compressed, nor is HTTP API's answer.
          'accept-encoding': 'identity',
        },
        signal,
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', reject);
        incoming.on('end', () =>
          resolve({
            status: incoming.statusCode ?? 502,
            headers: incoming.headers,
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

async function handle(
  upstream: URL,
  options: GatewayFrontOptions & { readonly timeoutMs: number },
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const { timeoutMs } = options;
  const body = await readBody(request);
  const noRoute =
    options.routes && routeRefusal(options.routes, request.method ?? 'GET', request.url ?? '/');
  if (noRoute) return send(response, noRoute);
  if (body === 'too large') return send(response, gatewayAnswers.payloadTooLarge);
  const refused = refusalOf({
    method: request.method ?? 'GET',
    target: request.url ?? '/',
    headers: request.headers,
    body,
  });
  if (refused) return send(response, refused);
  // API Gateway answers at the integration timeout whatever the function is still doing; the
  // function runs on (as a Lambda does), only its answer is dropped.
  const abort = new AbortController();
  const timer = setTimeout(() => {
    send(response, gatewayAnswers.timedOut);
    abort.abort();
  }, timeoutMs);
  try {
    const result = await forward(upstream, request, body, abort.signal);
    const tooLarge = refusalOfResult(result);
    if (tooLarge) return send(response, tooLarge);
    if (response.headersSent) return;
    response.writeHead(result.status, {
      ...withoutFraming(result.headers),
      'content-length': result.body.length,
    });
    response.end(result.body);
  } catch {
    send(response, gatewayAnswers.integrationFailed);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * An HTTP front for the local API that refuses what API Gateway's HTTP API and Lambda refuse
 * (gateway-limits.ts) and passes everything else through unchanged.
 */
export async function startGatewayFront(options: GatewayFrontOptions): Promise<GatewayFront> {
  const upstream = new URL(options.upstream);
  const timeoutMs = options.timeoutMs ?? GATEWAY_TIMEOUT_MS;
  const server = createServer((request, response) => {
    handle(upstream, { ...options, timeoutMs }, request, response).catch(() => {
      send(response, gatewayAnswers.integrationFailed);
    });
  });
  // The front answers within timeoutMs itself; Node's own request timeout must not come first.
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
