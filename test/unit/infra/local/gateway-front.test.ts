import {
  createServer,
  get,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayFront, startGatewayFront } from '../../../../infra/local/gateway-front.js';
import {
  LAMBDA_RESPONSE_LIMIT_BYTES,
  lambdaResultBytes,
} from '../../../../infra/local/gateway-limits.js';

// A stand-in for serverless-offline: each path is a function with a known answer or delay.
// (The front against the real serverless-offline: test/integration/local-limits.test.ts.)
const HEADERS = { 'content-type': 'application/json', 'x-echo': 'yes' };
const bodyOfResult = (bytes: number) =>
  bytes - (lambdaResultBytes({ status: 201, headers: HEADERS, body: Buffer.from('x') }) - 1);
let seen = 0;

function upstream(request: IncomingMessage, response: ServerResponse): void {
  seen += 1;
  const url = new URL(request.url ?? '/', 'http://stub');
  const answer = (body: string, delayMs = 0) =>
    setTimeout(() => response.writeHead(201, HEADERS).end(body), delayMs);
  if (url.pathname === '/slow') return void answer('{}', Number(url.searchParams.get('ms')));
  if (url.pathname === '/never') return;
  if (url.pathname === '/sized') {
    return void answer('r'.repeat(bodyOfResult(Number(url.searchParams.get('bytes')))));
  }
  if (url.pathname === '/compressing') {
    // As serverless-offline's hapi does: gzip for a caller that accepts it, sent chunked.
    const body = Buffer.from('r'.repeat(bodyOfResult(Number(url.searchParams.get('bytes')))));
    if (!/gzip/.test(request.headers['accept-encoding'] ?? '')) {
      return void response.writeHead(201, HEADERS).end(body);
    }
    response.writeHead(201, { ...HEADERS, 'content-encoding': 'gzip' });
    return void response.end(gzipSync(body));
  }
  let length = 0;
  request.on('data', (chunk: Buffer) => {
    length += chunk.length;
  });
  request.on('end', () =>
    answer(JSON.stringify({ length, method: request.method, host: request.headers.host })),
  );
}

describe('the local API gateway front', () => {
  let stub: Server;
  let front: GatewayFront;

  beforeAll(async () => {
    stub = createServer(upstream);
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    const { port } = stub.address() as AddressInfo;
    front = await startGatewayFront({ upstream: `http://127.0.0.1:${port}`, timeoutMs: 1000 });
  });

  afterAll(async () => {
    await front.close();
    stub.closeAllConnections();
    await new Promise((resolve) => stub.close(resolve));
  });

  it('passes a request and its answer through unchanged', async () => {
    const response = await fetch(`${front.url}/echo?q=1`, { method: 'PUT', body: 'hello' });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-echo')).toBe('yes');
    expect(await response.json()).toEqual({
      length: 5,
      method: 'PUT',
      host: new URL(front.url).host,
    });
  });

  it('answers 503 Service Unavailable at the integration timeout, not before', async () => {
    const started = performance.now();
    const late = await fetch(`${front.url}/never`);
    const elapsed = performance.now() - started;
    expect(late.status).toBe(503);
    expect(await late.text()).toBe('{"message":"Service Unavailable"}');
    expect(late.headers.get('x-local-gateway-limit')).toBe('integration-timeout');
    expect(elapsed).toBeGreaterThanOrEqual(990);
    expect(elapsed).toBeLessThan(2500);
    const inTime = await fetch(`${front.url}/slow?ms=100`);
    expect(inTime.status).toBe(201);
  });

  it('answers 500 for a function result one byte over 6,291,556 bytes, passes one at it', async () => {
    const over = await fetch(`${front.url}/sized?bytes=${LAMBDA_RESPONSE_LIMIT_BYTES + 1}`);
    expect(over.status).toBe(500);
    expect(await over.text()).toBe('{"message":"Internal Server Error"}');
    expect(over.headers.get('x-local-gateway-limit')).toBe('lambda-response-payload');
    const at = await fetch(`${front.url}/sized?bytes=${LAMBDA_RESPONSE_LIMIT_BYTES}`);
    expect(at.status).toBe(201);
    expect((await at.arrayBuffer()).byteLength).toBe(bodyOfResult(LAMBDA_RESPONSE_LIMIT_BYTES));
  });

  it('measures the answer as the function returned it, not as the API behind compressed it', async () => {
    // The 7 MB answer of issue 31 passed locally: hapi gzipped it to a few KB for a caller
    // sending Accept-Encoding: gzip (as fetch and curl --compressed do), and the front measured
    // that. A Lambda result is never compressed.
    const gzip = { headers: { 'accept-encoding': 'gzip, deflate, br' } };
    const over = await fetch(
      `${front.url}/compressing?bytes=${LAMBDA_RESPONSE_LIMIT_BYTES + 1}`,
      gzip,
    );
    expect(over.status).toBe(500);
    expect(await over.text()).toBe('{"message":"Internal Server Error"}');
    expect(over.headers.get('x-local-gateway-limit')).toBe('lambda-response-payload');
    const at = await fetch(`${front.url}/compressing?bytes=${LAMBDA_RESPONSE_LIMIT_BYTES}`, gzip);
    expect(at.status).toBe(201);
    // Passed on as HTTP API passes a Lambda result: not compressed.
    expect(at.headers.get('content-encoding')).toBeNull();
    expect((await at.arrayBuffer()).byteLength).toBe(bodyOfResult(LAMBDA_RESPONSE_LIMIT_BYTES));
  });

  it('refuses a body over 10 MiB with 413 without calling the function', async () => {
    const before = seen;
    const response = await fetch(`${front.url}/echo`, {
      method: 'POST',
      body: Buffer.alloc(10 * 1024 * 1024 + 1, 'a'),
    });
    expect(response.status).toBe(413);
    const refusal = (await response.json()) as { message: string };
    expect(refusal).toMatchObject({ error_code: 413, retriable: false });
    // AWS's words, then the limit and what to do.
    expect(refusal.message).toMatch(/^Request Entity Too Large: .*10 MB .*10,485,760 bytes/);
    expect(refusal.message).toContain('several smaller requests');
    expect(response.headers.get('x-local-gateway-limit')).toBe('http-api-payload');
    expect(seen).toBe(before);
  });

  it("keeps the caller's Host, so the functions' self links name the API the caller reached", async () => {
    // fetch sets Host itself; node:http sends the one given, as a client behind a proxy would.
    const body = await new Promise<string>((resolve, reject) => {
      get(`${front.url}/echo`, { headers: { host: 'api.example.test' } }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        response.on('end', () => resolve(text));
      }).on('error', reject);
    });
    expect(JSON.parse(body)).toMatchObject({ host: 'api.example.test' });
  });

  it("answers a path no route takes with 404 and another method with 405 and Allow, in Tally's error shape", async () => {
    const { port } = stub.address() as AddressInfo;
    const routed = await startGatewayFront({
      upstream: `http://127.0.0.1:${port}`,
      routes: [
        'POST /v3/clusters/{cluster_id}/audits',
        'GET /v3/clusters/{cluster_id}/audits/{id}',
      ],
    });
    try {
      const before = seen;
      const missing = await fetch(`${routed.url}/v3/nothing-here`);
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type')).toBe('application/json');
      expect(await missing.json()).toMatchObject({
        error_code: 404,
        retriable: false,
        message: expect.stringContaining('GET /openapi.json'),
      });
      const wrongMethod = await fetch(`${routed.url}/v3/clusters/c1/audits`, { method: 'DELETE' });
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.get('allow')).toBe('POST');
      expect(await wrongMethod.json()).toMatchObject({ error_code: 405, retriable: false });
      expect(seen).toBe(before);
      const taken = await fetch(`${routed.url}/v3/clusters/c1/audits/a1`);
      expect(taken.status).toBe(201);
      expect(seen).toBe(before + 1);
    } finally {
      await routed.close();
    }
  });

  it('answers 500 when the API behind cannot be reached', async () => {
    const closed = await startGatewayFront({ upstream: 'http://127.0.0.1:9' });
    try {
      const response = await fetch(`${closed.url}/any`);
      expect(response.status).toBe(500);
      expect(await response.text()).toBe('{"message":"Internal Server Error"}');
    } finally {
      await closed.close();
    }
  });
});
