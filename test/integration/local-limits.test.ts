import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type DynamoDbServer, startDynamoDbServer } from '../../infra/local/dynamodb-server.js';
import {
  HTTP_API_PAYLOAD_LIMIT_BYTES,
  LAMBDA_REQUEST_LIMIT_BYTES,
} from '../../infra/local/gateway-limits.js';
import { type LocalApi, startLocalApi } from '../../infra/local/local-api.js';
import { createLocalTables, localDynamoDbClient } from '../../infra/local/local-tables.js';
import { waitForDynamoDb } from '../../infra/local/readiness.js';
import { LOCAL_TABLE_PREFIX } from '../../infra/local/stack.js';
import { testKafka } from '../helpers/kafka.js';
import { createTopic } from '../helpers/publish-client.js';

// The local API (serverless-offline behind the gateway front) against the real functions: what
// API Gateway's HTTP API and Lambda refuse is refused here too. The integration timeout is
// shortened to GATEWAY_MS so the test need not wait 29 s. A DynamoDB API of its own, because
// the timeout case pauses it; the shared Kafka broker is only read.
// The response limit (6,291,556 bytes) is crossed in test/unit/infra/local/gateway-front.test.ts:
// no route of Tally's answers over 6 MB (the publish routes refuse what could, issue 31); here
// every publish route's answer, large ones included, is measured and passed on uncompressed.
const GATEWAY_MS = 5_000;
const TOKEN = 'tally-local-limits-token';
/** The local 413: AWS's words, then the limit and what to do (gateway-limits.ts). */
const tooLarge = async (response: Response, limit: RegExp) => {
  expect(response.status).toBe(413);
  const body = (await response.json()) as { error_code: number; message: string };
  expect(body.error_code).toBe(413);
  expect(body.message).toMatch(/^Request Entity Too Large: /);
  expect(body.message).toMatch(limit);
  expect(body.message).toContain('several smaller requests');
};

describe('the local HTTP API enforces API Gateway and Lambda limits', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'tally-limits-'));
  let dynamodb: DynamoDbServer | undefined;
  let api: LocalApi | undefined;
  let paused = false;
  const url = (path: string) => `${api?.url}${path}`;
  const post = (body: Buffer, authorization?: string) =>
    fetch(url('/v3/clusters/any/topics/any/records'), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(authorization !== undefined && { authorization }),
      },
      body,
    });
  // A JSON body of `bytes` bytes: an object with one long string.
  const jsonOf = (bytes: number) => Buffer.from(`{"v":"${'a'.repeat(bytes - 8)}"}`);

  beforeAll(async () => {
    dynamodb = await startDynamoDbServer(workDir);
    await waitForDynamoDb(dynamodb.endpoint, { timeoutMs: 30_000 });
    const client = localDynamoDbClient(dynamodb.endpoint);
    await createLocalTables(client, LOCAL_TABLE_PREFIX).finally(() => client.destroy());
    api = await startLocalApi({
      kafkaBrokers: inject('kafkaBrokers'),
      dynamodbEndpoint: dynamodb.endpoint,
      workDir,
      timeoutMs: 110_000,
      gatewayTimeoutMs: GATEWAY_MS,
      env: {
        TALLY_AUTH: 'tokens',
        TALLY_AUTH_TOKENS: JSON.stringify({
          [TOKEN]: { caller: 'limits', scopes: ['admin'], topics: ['*'] },
        }),
        // The function waits on a paused DynamoDB up to its own 29 s deadline, not 3 s.
        TALLY_DYNAMODB_TIMEOUT_MS: '60000',
        LOG_LEVEL: 'error',
      },
    });
  });

  afterAll(async () => {
    if (paused && dynamodb) process.kill(dynamodb.process.pid, 'SIGCONT');
    await api?.close();
    await api?.process.stop();
    api?.removeBundles();
    await dynamodb?.process.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('refuses a body over 10 MiB with 413 Request Entity Too Large', async () => {
    const response = await post(jsonOf(HTTP_API_PAYLOAD_LIMIT_BYTES + 1));
    await tooLarge(response, /API Gateway HTTP API's 10 MB payload limit \(10,485,760 bytes\)/);
    expect(response.headers.get('x-local-gateway-limit')).toBe('http-api-payload');
  });

  it("answers an unknown route 404 and a method a route does not take 405 with Allow, in Tally's error shape", async () => {
    const missing = await fetch(url('/v3/no-such-route'));
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error_code: 404, retriable: false });
    const wrong = await fetch(url('/v3/clusters/any/audits'), { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    expect(await wrong.json()).toMatchObject({ error_code: 405, retriable: false });
  });

  it("builds GET /v3/clusters' self links from the host the caller reached", async () => {
    const response = await fetch(url('/v3/clusters'), {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(response.status).toBe(200);
    const list = (await response.json()) as {
      metadata: { self: string };
      data: Array<{ metadata: { self: string } }>;
    };
    expect(list.metadata.self).toBe(url('/v3/clusters'));
    expect(list.data[0]?.metadata.self).toBe(url(`/v3/clusters/${inject('kafkaClusterId')}`));
  });

  it('refuses a request whose Lambda event is just over 6 MiB, passes one just under', async () => {
    // A body of exactly 6 MiB: its event (body plus headers and context) is over by ~1 KB.
    const over = await post(jsonOf(LAMBDA_REQUEST_LIMIT_BYTES));
    await tooLarge(over, /Lambda's 6 MB invoke payload limit \(6,291,456 bytes/);
    expect(over.headers.get('x-local-gateway-limit')).toBe('lambda-request-payload');
    // 4 KiB less: the function gets it, and answers for itself (no token: Tally's own 401).
    const under = await post(jsonOf(LAMBDA_REQUEST_LIMIT_BYTES - 4096));
    expect(under.status).toBe(401);
    expect(await under.json()).toMatchObject({ error_code: 401, field: 'Authorization' });
  });

  it("passes every publish route's answer on as the function returned it, uncompressed: 10,000 records at the longest names are the function's 413, the count it names is answered", async () => {
    const admin = testKafka('tally-local-limits').admin();
    await admin.connect();
    try {
      const topic = await createTopic(admin, 1, {}, 249);
      const cluster = inject('kafkaClusterId');
      // What fetch and curl --compressed send: serverless-offline gzips an answer over 1 KB then.
      const base = {
        authorization: `Bearer ${TOKEN}`,
        'tally-stream': 's'.repeat(249),
        'accept-encoding': 'gzip, deflate, br',
      };
      const value = { type: 'BINARY', data: 'eA==' };
      const id = (i: number) => `${'i'.repeat(74)}${String(i).padStart(6, '0')}`;
      const routes = {
        stream: (n: number) => ({
          path: `/v3/clusters/${cluster}/topics/${topic}/records`,
          type: 'application/json',
          body: Array.from({ length: n }, () => JSON.stringify({ value })).join('\n'),
        }),
        batch: (n: number) => ({
          path: `/v3/clusters/${cluster}/topics/${topic}/records:batch`,
          type: 'application/json',
          body: JSON.stringify({
            entries: Array.from({ length: n }, (_, i) => ({ id: id(i), value })),
          }),
        }),
        v2: (n: number) => ({
          path: `/topics/${topic}`,
          type: 'application/vnd.kafka.binary.v2+json',
          body: JSON.stringify({ records: Array.from({ length: n }, () => ({ value: 'eA==' })) }),
        }),
      };
      const send = ({ path, type, body }: { path: string; type: string; body: string }) =>
        fetch(url(path), { method: 'POST', headers: { ...base, 'content-type': type }, body });
      for (const [route, request] of Object.entries(routes)) {
        const refused = await send(request(10_000));
        expect(refused.status, route).toBe(413);
        // The function's own refusal, not the gateway's.
        expect(refused.headers.get('x-local-gateway-limit')).toBeNull();
        const error = (await refused.json()) as { error_code: number; message: string };
        expect(error.error_code).toBe(413);
        expect(error.message).toContain("Lambda's response limit of 6,291,556 bytes");
        const fitting = Number(
          /at most ([\d,]+) records fit/.exec(error.message)?.[1]?.replaceAll(',', ''),
        );
        expect(fitting, error.message).toBeGreaterThan(7_000);
        // 200 records: an answer of ~150 KB, which serverless-offline would have gzipped.
        const answered = await send(request(route === 'stream' ? fitting : 200));
        expect(answered.status, route).toBe(route === 'batch' ? 207 : 200);
        expect(answered.headers.get('content-encoding'), route).toBeNull();
        const text = await answered.text();
        expect(Number(answered.headers.get('content-length'))).toBe(Buffer.byteLength(text));
        if (route === 'stream') {
          // The count named, at the longest names: its ~6 MB answer passes the front.
          expect(text.split('\r\n').filter(Boolean)).toHaveLength(fitting);
          expect(text.length).toBeGreaterThan(5_000_000);
        }
      }
    } finally {
      await admin.disconnect();
    }
  });

  it('answers 503 Service Unavailable at the integration timeout while the function still waits', async () => {
    const lookup = () =>
      fetch(url(`/v3/clusters/${inject('kafkaClusterId')}/records/lookup?stream=s&seq=1`), {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
    // In time: the function's own answer (nothing published: 404).
    const inTime = await lookup();
    expect(inTime.status).toBe(404);
    process.kill(dynamodb?.process.pid as number, 'SIGSTOP');
    paused = true;
    try {
      const started = performance.now();
      const late = await lookup();
      const elapsed = performance.now() - started;
      expect(late.status).toBe(503);
      expect(await late.text()).toBe('{"message":"Service Unavailable"}');
      expect(late.headers.get('x-local-gateway-limit')).toBe('integration-timeout');
      expect(elapsed).toBeGreaterThanOrEqual(GATEWAY_MS - 10);
      expect(elapsed).toBeLessThan(GATEWAY_MS + 3_000);
    } finally {
      process.kill(dynamodb?.process.pid as number, 'SIGCONT');
      paused = false;
    }
  });
});
