import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTallyClient, TallyRequestError } from '../../../../packages/client/src/index.js';

// The client against a local HTTP server that answers a scripted sequence of statuses: which
// answers it sends again, with which Idempotency-Key, after how long (docs/api.md's rules).

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}
type Reply = { status: number; body?: unknown; headers?: Record<string, string> } | 'hang-up';

const acked = (seq: number, offset = seq - 1) => ({
  error_code: 200,
  cluster_id: 'c1',
  topic_name: 'orders',
  partition_id: 0,
  offset,
  timestamp: '2026-12-02T00:00:00Z',
  stream: 'orders',
  seq,
});
const notAcked = (outcome: string, status: number, seq: number) => ({
  error_code: status,
  message: `${outcome} for the test`,
  outcome,
  retriable: true,
  stream: 'orders',
  seq,
  partition_id: 0,
});
const lines = (...reports: unknown[]) => reports.map((r) => `${JSON.stringify(r)}\r\n`).join('');

describe('@kafka-tally/client', () => {
  let server: Server;
  let baseUrl: string;
  let replies: Reply[];
  let seen: Seen[];
  let slept: number[];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
        });
        const reply = replies.shift() ?? { status: 500, body: { message: 'no reply scripted' } };
        if (reply === 'hang-up') {
          req.socket.destroy();
          return;
        }
        const body = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {});
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    replies = [];
    seen = [];
    slept = [];
  });

  let keys = 0;
  const client = (maxAttempts = 5) =>
    createTallyClient({
      baseUrl,
      token: 'secret',
      clusterId: 'c1',
      retry: { maxAttempts },
      sleep: async (ms) => {
        slept.push(ms);
      },
      newKey: () => `key-${++keys}`,
    });
  const keyOf = (s: Seen) => s.headers['idempotency-key'];
  const one = [{ value: { type: 'STRING' as const, data: 'a' } }];

  it('sends one streaming body with a key, a bearer token, JSON and the stream', async () => {
    replies = [{ status: 200, body: lines(acked(1), acked(2)) }];
    const result = await client().produce('orders', [...one, ...one], {
      stream: 'orders',
      idempotencyKey: 'mine',
    });
    expect(result).toMatchObject({ idempotencyKey: 'mine', attempts: 1 });
    expect(result.records).toEqual([
      {
        ...{ outcome: 'ACKED', topic: 'orders', partition: 0, timestamp: '2026-12-02T00:00:00Z' },
        offset: 0,
        stream: 'orders',
        seq: 1,
      },
      {
        ...{ outcome: 'ACKED', topic: 'orders', partition: 0, timestamp: '2026-12-02T00:00:00Z' },
        offset: 1,
        stream: 'orders',
        seq: 2,
      },
    ]);
    const [request] = seen;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/v3/clusters/c1/topics/orders/records');
    expect(request?.headers).toMatchObject({
      'content-type': 'application/json',
      authorization: 'Bearer secret',
      'idempotency-key': 'mine',
      'tally-stream': 'orders',
    });
    expect(request?.body.split('\n').map((l) => JSON.parse(l))).toEqual([one[0], one[0]]);
  });

  it('sends a 503 again with the same key after its Retry-After', async () => {
    replies = [
      {
        status: 503,
        headers: { 'retry-after': '3' },
        body: { message: 'DynamoDB', retriable: true },
      },
      { status: 200, body: lines(acked(1)) },
    ];
    const result = await client().produce('orders', one);
    expect(result.attempts).toBe(2);
    expect(result.records[0]?.outcome).toBe('ACKED');
    expect(seen.map(keyOf)).toEqual([result.idempotencyKey, result.idempotencyKey]);
    expect(slept).toEqual([3000]);
  });

  it("sends a lone record's 504 UNKNOWN again with the same key", async () => {
    replies = [
      { status: 504, body: notAcked('UNKNOWN', 504, 1) },
      { status: 200, body: lines(acked(1)) },
    ];
    const result = await client().produce('orders', one);
    expect(result.records).toMatchObject([{ outcome: 'ACKED', seq: 1 }]);
    expect(new Set(seen.map(keyOf)).size).toBe(1);
  });

  it('sends a stream again when one of its records is NOT_SENT, and reports every outcome', async () => {
    replies = [
      { status: 200, body: lines(acked(1), notAcked('NOT_SENT', 503, 2)) },
      { status: 200, body: lines(acked(1), acked(2)) },
    ];
    const result = await client().produce('orders', [...one, ...one]);
    expect(result.records.map((r) => r.outcome)).toEqual(['ACKED', 'ACKED']);
    expect(seen).toHaveLength(2);
    expect(seen[0]?.body).toBe(seen[1]?.body);
    expect(keyOf(seen[0] as Seen)).toBe(keyOf(seen[1] as Seen));
  });

  it('waits out a 429 (Retry-After as an HTTP date too) and keeps the key', async () => {
    const later = new Date(Date.now() + 60_000).toUTCString();
    replies = [
      { status: 429, headers: { 'retry-after': '2' }, body: { message: 'busy', retriable: true } },
      {
        status: 429,
        headers: { 'retry-after': later },
        body: { message: 'busy', retriable: true },
      },
      { status: 200, body: lines(acked(1)) },
    ];
    const result = await client().produce('orders', one);
    expect(result.attempts).toBe(3);
    expect(slept[0]).toBe(2000);
    // An HTTP date a minute away, held to the longest wait (10 s by default).
    expect(slept[1]).toBe(10_000);
    expect(new Set(seen.map(keyOf)).size).toBe(1);
  });

  it('waits out a 409 for a key still in flight and sends it again with that key', async () => {
    replies = [
      {
        status: 409,
        headers: { 'retry-after': '2' },
        body: {
          error_code: 409,
          message: 'Idempotency-Key: a request with this key is still in progress; retry later',
          field: 'Idempotency-Key',
          retriable: true,
        },
      },
      { status: 200, body: lines(acked(1)) },
    ];
    const result = await client().produce('orders', one, { idempotencyKey: 'order-7' });
    expect(result.records[0]?.outcome).toBe('ACKED');
    expect(seen.map(keyOf)).toEqual(['order-7', 'order-7']);
    expect(slept).toEqual([2000]);
  });

  it('never sends a 4xx again: 400, 404, a final 409 and a 422 for a reused key are thrown at once', async () => {
    for (const [status, body] of [
      [
        400,
        { error_code: 400, message: 'value.type: unknown', field: 'value.type', retriable: false },
      ],
      [404, { error_code: 40403, message: 'topic orders does not exist', retriable: false }],
      [409, { error_code: 409, message: 'group is not empty', retriable: false }],
      [
        422,
        {
          error_code: 422,
          message: 'Idempotency-Key: this key was already used for a different request',
          field: 'Idempotency-Key',
          retriable: false,
        },
      ],
    ] as const) {
      seen = [];
      replies = [{ status, body, headers: { 'retry-after': '1' } }];
      const error = await client()
        .produce('orders', one)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TallyRequestError);
      expect(error).toMatchObject({ status, attempts: 1, body });
      expect(seen).toHaveLength(1);
    }
    expect(slept).toEqual([]);
  });

  it('takes a new key after a 422 for seqs the audit voided', async () => {
    replies = [
      {
        status: 422,
        body: {
          error_code: 422,
          message:
            'Idempotency-Key: seqs from 5 of stream orders were voided by the audit (allocated long ago, never sent); nothing was sent; retry with a new key',
          field: 'Idempotency-Key',
          retriable: false,
        },
      },
      { status: 200, body: lines(acked(9)) },
    ];
    const result = await client().produce('orders', one, { idempotencyKey: 'old' });
    expect(seen.map(keyOf)).toEqual(['old', result.idempotencyKey]);
    expect(result.idempotencyKey).not.toBe('old');
    expect(result.records).toMatchObject([{ outcome: 'ACKED', seq: 9 }]);
  });

  it('sends again, same key, when the connection fails before an answer', async () => {
    replies = ['hang-up', { status: 200, body: lines(acked(1)) }];
    const result = await client().produce('orders', one);
    expect(result.attempts).toBe(2);
    expect(new Set(seen.map(keyOf)).size).toBe(1);
  });

  it('stops after its attempts: the last outcome of a lone record, or the error', async () => {
    replies = Array.from({ length: 3 }, () => ({ status: 504, body: notAcked('UNKNOWN', 504, 4) }));
    const result = await client(3).produce('orders', one);
    expect(result).toMatchObject({
      attempts: 3,
      records: [{ outcome: 'UNKNOWN', seq: 4, retriable: true }],
    });
    replies = Array.from({ length: 3 }, () => ({
      status: 503,
      body: { message: 'down', retriable: true },
    }));
    const error = await client(3)
      .produce('orders', one)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'TallyRequestError',
      status: 503,
      attempts: 3,
      retriable: true,
    });
    // Backoff without Retry-After: growing, and never zero.
    expect(slept.slice(-2).every((ms) => ms > 0)).toBe(true);
  });

  it('throws, without sending again, a 200 that is not a report stream', async () => {
    replies = [{ status: 200, body: '<html>a proxy</html>' }];
    const error = await client()
      .produce('orders', one)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'TallyRequestError', status: 200, attempts: 1 });
    expect(seen).toHaveLength(1);
  });

  it('returns a FAILED record (refused by the broker) without sending it again', async () => {
    replies = [{ status: 502, body: { ...notAcked('FAILED', 502, 3), retriable: false } }];
    const result = await client().produce('orders', one);
    expect(result).toMatchObject({ attempts: 1, records: [{ outcome: 'FAILED', seq: 3 }] });
  });

  it("a batch: each entry's outcome by id in the request's order, unsettled ones sent again", async () => {
    const id = (i: string, r: object) => ({ id: i, ...r });
    replies = [
      {
        status: 207,
        body: {
          successes: [id('a', acked(1))],
          failures: [
            id('b', notAcked('NOT_SENT', 503, 2)),
            id('c', {
              error_code: 400,
              message: 'value.data: not base64',
              outcome: 'REJECTED',
              retriable: false,
            }),
          ],
        },
      },
      {
        status: 207,
        body: {
          successes: [id('a', acked(1)), id('b', acked(2))],
          failures: [
            id('c', {
              error_code: 400,
              message: 'value.data: not base64',
              outcome: 'REJECTED',
              retriable: false,
            }),
          ],
        },
      },
    ];
    const entries = ['c', 'a', 'b'].map((i) => ({
      id: i,
      value: { type: 'STRING' as const, data: i },
    }));
    const result = await client().produceBatch('orders', entries);
    expect(result.records.map((r) => [r.id, r.outcome])).toEqual([
      ['c', 'REJECTED'],
      ['a', 'ACKED'],
      ['b', 'ACKED'],
    ]);
    expect(seen[0]?.url).toBe('/v3/clusters/c1/topics/orders/records:batch');
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ entries });
    expect(keyOf(seen[0] as Seen)).toBe(keyOf(seen[1] as Seen));
  });

  it('looks up a seq or a key, and says when the ledger has none', async () => {
    replies = [
      {
        status: 200,
        body: {
          kind: 'TallyRecordLookup',
          records: [
            {
              stream: 'orders',
              seq: 1,
              topic_name: 'orders',
              outcome: 'ACKED',
              partition_id: 0,
              offset: 0,
              session: 's1',
              idempotency_key: 'k',
            },
          ],
        },
      },
      {
        status: 404,
        body: { error_code: 404, message: 'seq: 9 was never allocated', field: 'seq' },
      },
      { status: 503, body: { message: 'DynamoDB', retriable: true } },
      { status: 200, body: { records: [] } },
    ];
    const c = client();
    expect(await c.lookup({ idempotencyKey: 'k' })).toEqual({
      found: true,
      records: [
        {
          stream: 'orders',
          seq: 1,
          topic: 'orders',
          outcome: 'ACKED',
          partition: 0,
          offset: 0,
          session: 's1',
          idempotencyKey: 'k',
        },
      ],
    });
    expect(await c.lookup({ stream: 'orders', seq: 9 })).toEqual({
      found: false,
      message: 'seq: 9 was never allocated',
    });
    expect(await c.lookup({ stream: 'orders', seq: 1 })).toEqual({ found: true, records: [] });
    expect(seen.map((s) => s.url)).toEqual([
      '/v3/clusters/c1/records/lookup?idempotency_key=k',
      '/v3/clusters/c1/records/lookup?stream=orders&seq=9',
      '/v3/clusters/c1/records/lookup?stream=orders&seq=1',
      '/v3/clusters/c1/records/lookup?stream=orders&seq=1',
    ]);
  });

  it('finds the cluster id from GET /v3/clusters when not given', async () => {
    replies = [
      { status: 200, body: { data: [{ cluster_id: 'k-42' }] } },
      { status: 200, body: lines(acked(1)) },
    ];
    const c = createTallyClient({ baseUrl: `${baseUrl}/`, sleep: async () => {} });
    await c.produce('orders', one);
    expect(seen.map((s) => s.url)).toEqual([
      '/v3/clusters',
      '/v3/clusters/k-42/topics/orders/records',
    ]);
    expect(seen[1]?.headers.authorization).toBeUndefined();
  });
});
