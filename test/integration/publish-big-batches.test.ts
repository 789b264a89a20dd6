import { randomBytes } from 'node:crypto';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LAMBDA_RESPONSE_LIMIT_BYTES,
  lambdaResultBytes,
} from '../../infra/local/gateway-limits.js';
import { httpEvent } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import {
  createTopic,
  headerText,
  loadHandlers,
  produceEvent,
  type ReadRecord,
  type Response,
  readBack,
  reportLines,
  totalRecords,
} from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { loggedLines } from '../helpers/quiet-logs.js';

// Requests at the configured limits (the defaults: 10,000 records, 6,000,000 bytes, an answer
// within Lambda's 6,291,556 bytes) on every route, against the real broker: a partition's
// records are split into record batches that fit max.message.bytes, and keyless records are
// spread over partitions by seq block.

/** Records in the bodies that fill MAX_BYTES. */
const MAX_ENTRIES = 1000;
const MAX_BYTES = 6_000_000;
/** TALLY_MAX_BATCH_ENTRIES' default. */
const RECORD_CAP = 10_000;

/** A handler's response as the Lambda result it is. */
const asResult = (response: Response) => ({
  status: response.statusCode,
  headers: response.headers,
  body: Buffer.from(response.body),
});

interface Placed {
  readonly seq: number;
  readonly partition: number;
  readonly offset: number;
}

/** Records whose JSON, as `shape` writes them, fills the body to just under MAX_BYTES. */
function recordsAtLimit(
  keyed: boolean,
  shape: (records: Array<Record<string, unknown>>) => string,
) {
  const make = (valueB64: (i: number) => string) =>
    Array.from({ length: MAX_ENTRIES }, (_, i) => ({
      ...(keyed && { key: { type: 'STRING', data: `key-${i}` } }),
      value: { type: 'BINARY', data: valueB64(i) },
    }));
  const overhead = shape(make(() => '')).length;
  // base64 in whole quads; 4 KB of slack for the ids and digits that differ per record.
  const quads = Math.floor((MAX_BYTES - 4096 - overhead) / MAX_ENTRIES / 4);
  const values = Array.from({ length: MAX_ENTRIES }, () => randomBytes(quads * 3));
  const body = shape(make((i) => (values[i] as Buffer).toString('base64')));
  expect(body.length).toBeLessThanOrEqual(MAX_BYTES);
  expect(body.length).toBeGreaterThan(MAX_BYTES - 10_000);
  return { body, values };
}

const routes = {
  batch: (records: Array<Record<string, unknown>>) =>
    JSON.stringify({
      entries: records.map((record, i) => ({ id: `e-${String(i).padStart(4, '0')}`, ...record })),
    }),
  stream: (records: Array<Record<string, unknown>>) =>
    records.map((record) => JSON.stringify(record)).join('\n'),
  v2: (records: Array<Record<string, unknown>>) =>
    JSON.stringify({
      records: records.map((record) => ({
        ...(record.key !== undefined && {
          key: Buffer.from((record.key as { data: string }).data).toString('base64'),
        }),
        value: (record.value as { data: string }).data,
      })),
    }),
};
type Route = keyof typeof routes;

/** Where each record landed, in request order, from any route's answer; fails on any error. */
function placed(route: Route, response: Response): Placed[] {
  if (route === 'batch') {
    const body = JSON.parse(response.body);
    expect(body.failures).toEqual([]);
    return body.successes.map((s: { seq: number; partition_id: number; offset: number }) => ({
      seq: s.seq,
      partition: s.partition_id,
      offset: s.offset,
    }));
  }
  const reports = route === 'v2' ? JSON.parse(response.body).offsets : reportLines(response);
  return reports.map((r: Record<string, number | null>) => {
    expect(r.error_code ?? 200, JSON.stringify(r)).toBe(200);
    return { seq: r.seq, partition: r.partition ?? r.partition_id, offset: r.offset };
  });
}

function byPlace(records: readonly ReadRecord[]) {
  return new Map(records.map((r) => [`${r.partition}/${r.offset}`, r]));
}

describe('requests at the limits', () => {
  const admin: Admin = testKafka('tally-test-big-batches').admin();
  let api: Awaited<ReturnType<typeof loadHandlers>>;

  beforeAll(async () => {
    await usePublishEnv();
    await admin.connect();
    api = await loadHandlers();
  });
  afterAll(() => admin.disconnect());

  const call = (route: Route, topic: string, body: string, headers: Record<string, string> = {}) =>
    route === 'batch'
      ? api.batch(produceEvent(topic, body, headers))
      : route === 'stream'
        ? api.produce(produceEvent(topic, body, headers))
        : api.v2(
            httpEvent({
              pathParameters: { topic_name: topic },
              headers: { 'content-type': 'application/vnd.kafka.binary.v2+json', ...headers },
              body,
            }),
          );

  it('acknowledges 1,000 keyless 1 KB records in one batch, over several partitions, and a retry repeats them', async () => {
    const topic = await createTopic(admin, 3);
    const value = Buffer.alloc(1024, 'v').toString('base64');
    const body = routes.batch(
      Array.from({ length: 1000 }, () => ({ value: { type: 'BINARY', data: value } })),
    );
    const headers = { 'idempotency-key': `big-${topic}` };
    const response = await call('batch', topic, body, headers);
    expect(response.statusCode).toBe(207);
    const first = placed('batch', response);
    expect(first.map((p) => p.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(new Set(first.map((p) => p.partition)).size).toBe(3);
    // A block of seqs stays together, so each partition gets runs, not a scatter.
    for (const p of first)
      expect(p.partition).toBe(first[Math.floor((p.seq - 1) / 100) * 100]?.partition);

    const retry = placed('batch', await call('batch', topic, body, headers));
    expect(retry).toEqual(first);
    expect(await totalRecords(admin, topic)).toBe(1000);
  });

  it('answers a retry of a keyed batch whose answer is over 400 KB as JSON with the same answer', async () => {
    // 1,000 entries with 80-character ids in a 249-character stream under a 255-character key:
    // a 207 of ~590 KB, more than one DynamoDB item holds as the stored idempotent response.
    const topic = await createTopic(admin, 3);
    const body = JSON.stringify({
      entries: Array.from({ length: 1000 }, (_, i) => ({
        id: `${'i'.repeat(75)}${String(i).padStart(5, '0')}`,
        value: { type: 'STRING', data: 'v' },
      })),
    });
    const headers = { 'idempotency-key': `k${'x'.repeat(254)}`, 'tally-stream': 's'.repeat(249) };
    const first = await call('batch', topic, body, { ...headers });
    expect(first.statusCode, first.body.slice(0, 300)).toBe(207);
    expect(first.body.length).toBeGreaterThan(400 * 1024);
    const retry = await call('batch', topic, body, { ...headers });
    expect(retry.statusCode, retry.body.slice(0, 300)).toBe(207);
    expect(JSON.parse(retry.body)).toEqual(JSON.parse(first.body));
    expect(await totalRecords(admin, topic)).toBe(1000);
  });

  const cases: Array<[Route, boolean]> = [
    ['batch', true],
    ['batch', false],
    ['stream', false],
    ['v2', true],
  ];
  it.each(cases)(
    'acknowledges a %s request at the limits (keyed: %s), every record as sent',
    async (route, keyed) => {
      const topic = await createTopic(admin, 3);
      const { body, values } = recordsAtLimit(keyed, routes[route]);
      const started = Date.now();
      const response = await call(route, topic, body);
      const elapsedMs = Date.now() - started;
      expect(response.statusCode, response.body.slice(0, 300)).toBe(route === 'batch' ? 207 : 200);
      const places = placed(route, response);
      expect(places).toHaveLength(MAX_ENTRIES);
      expect(elapsedMs).toBeLessThan(28_000);

      const log = byPlace(await readBack(topic, MAX_ENTRIES, 60_000));
      expect(log.size).toBe(MAX_ENTRIES);
      places.forEach((p, i) => {
        const record = log.get(`${p.partition}/${p.offset}`);
        expect(record?.value?.equals(values[i] as Buffer), `record ${i}`).toBe(true);
        expect(headerText(record?.headers, 'tally.seq')).toBe(String(p.seq));
        if (keyed) expect(record?.key?.toString()).toBe(`key-${i}`);
      });
      expect(new Set(places.map((p) => p.partition)).size).toBe(3);
    },
  );

  it("splits a partition's records to fit a small max.message.bytes; only a record over it is 413", async () => {
    const topic = await createTopic(admin, 1, { 'max.message.bytes': '4096' });
    const fine = (i: number) => ({ value: { type: 'STRING', data: `${i}`.padEnd(1000, '.') } });
    const records = Array.from({ length: 20 }, (_, i) => fine(i));
    records.splice(7, 0, { value: { type: 'STRING', data: 'x'.repeat(5000) } });
    const response = await call('batch', topic, routes.batch(records));
    const body = JSON.parse(response.body);
    expect(body.failures).toEqual([
      expect.objectContaining({ id: 'e-0007', error_code: 413, outcome: 'REJECTED' }),
    ]);
    expect(body.successes).toHaveLength(20);
    const log = await readBack(topic, 20);
    expect(log.map((r) => r.value?.toString().split('.')[0])).toEqual(
      Array.from({ length: 20 }, (_, i) => `${i}`),
    );
  });

  it('accepts a 1,001-record stream of small records, which the old fixed cap of 1,000 refused', async () => {
    const topic = await createTopic(admin, 1);
    const one = JSON.stringify({ value: { type: 'STRING', data: 'x' } });
    const response = await api.produce(
      produceEvent(topic, Array.from({ length: 1001 }, () => one).join('')),
    );
    expect(response.statusCode, response.body.slice(0, 300)).toBe(200);
    expect(placed('stream', response).map((p) => p.seq)).toEqual(
      Array.from({ length: 1001 }, (_, i) => i + 1),
    );
    expect(await totalRecords(admin, topic)).toBe(1001);
  });

  it('acknowledges 10,000 small records in one stream within the deadline', async () => {
    const topic = await createTopic(admin, 3);
    const one = JSON.stringify({ value: { type: 'STRING', data: 'x' } });
    const started = performance.now();
    const response = await api.produce(
      produceEvent(topic, Array.from({ length: RECORD_CAP }, () => one).join('\n')),
    );
    const elapsedMs = performance.now() - started;
    expect(response.statusCode, response.body.slice(0, 300)).toBe(200);
    expect(placed('stream', response)).toHaveLength(RECORD_CAP);
    expect(lambdaResultBytes(asResult(response))).toBeLessThanOrEqual(LAMBDA_RESPONSE_LIMIT_BYTES);
    console.info(`10,000 records in one stream request: ${Math.round(elapsedMs)} ms`);
    expect(elapsedMs).toBeLessThan(28_000);
    expect(await totalRecords(admin, topic)).toBe(RECORD_CAP);
  });

  it("refuses 10,000 records at the longest names on every route with 413 naming Lambda's limit and the count that fits: nothing sent, no seq taken", async () => {
    const topic = await createTopic(admin, 1, {}, 249);
    const stream = `${'s'.repeat(240)}${Date.now().toString(36)}`.slice(-249);
    const headers = { 'tally-stream': stream };
    const tiny = Array.from({ length: RECORD_CAP }, () => ({
      value: { type: 'BINARY', data: 'eA==' },
    }));
    const fits: Record<string, number> = {};
    for (const route of Object.keys(routes) as Route[]) {
      const body =
        route === 'batch'
          ? JSON.stringify({
              entries: tiny.map((r, i) => ({
                id: `${'i'.repeat(74)}${String(i).padStart(6, '0')}`,
                ...r,
              })),
            })
          : routes[route](tiny);
      const refused = await call(route, topic, body, headers);
      expect(refused.statusCode, `${route}: ${refused.body}`).toBe(413);
      const error = JSON.parse(refused.body);
      expect(error).toMatchObject({ error_code: 413, retriable: false, field: 'body' });
      expect(error.message).toContain("Lambda's response limit of 6,291,556 bytes");
      const fitting = /at most ([\d,]+) records fit/.exec(error.message)?.[1];
      expect(fitting, error.message).toBeDefined();
      fits[route] = Number(fitting?.replaceAll(',', ''));
      expect(fits[route]).toBeGreaterThan(7_000);
      expect(fits[route]).toBeLessThan(RECORD_CAP);
    }
    // Logged as refused, and nothing of it reached the broker or the stream's counter.
    expect(loggedLines()).toContainEqual(
      expect.objectContaining({ message: 'request failed', status: 413 }),
    );
    expect(await totalRecords(admin, topic)).toBe(0);
    // The count it named goes through, and its real answer fits.
    const count = fits.stream as number;
    const accepted = await call('stream', topic, routes.stream(tiny.slice(0, count)), headers);
    expect(accepted.statusCode, accepted.body.slice(0, 300)).toBe(200);
    const places = placed('stream', accepted);
    expect(places.map((p) => p.seq)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    const bytes = lambdaResultBytes(asResult(accepted));
    console.info(
      `fitting at the longest names: ${JSON.stringify(fits)}; ${count} acked: a ${bytes}-byte result`,
    );
    expect(bytes).toBeLessThanOrEqual(LAMBDA_RESPONSE_LIMIT_BYTES);
    expect(bytes).toBeGreaterThan(LAMBDA_RESPONSE_LIMIT_BYTES * 0.9);
  });

  it('refuses a request over either limit on every route, before anything is sent', async () => {
    const topic = await createTopic(admin, 1);
    const tiny = Array.from({ length: RECORD_CAP + 1 }, () => ({
      value: { type: 'BINARY', data: 'eA==' },
    }));
    const overRecords: Record<Route, number> = { batch: 422, stream: 413, v2: 400 };
    for (const route of Object.keys(routes) as Route[]) {
      const tooMany = await call(route, topic, routes[route](tiny));
      expect(tooMany.statusCode, `${route}: ${tooMany.body}`).toBe(overRecords[route]);
      expect(tooMany.body).toContain(`at most ${RECORD_CAP}`);
      const { body } = recordsAtLimit(false, routes[route]);
      const tooBig = await call(route, topic, body.padEnd(MAX_BYTES + 1, ' '));
      expect(tooBig.statusCode, `${route}: ${tooBig.body}`).toBe(413);
      expect(tooBig.body).toContain(`at most ${MAX_BYTES}`);
    }
    expect(await totalRecords(admin, topic)).toBe(0);
    const next = reportLines(
      await api.produce(produceEvent(topic, { value: { type: 'STRING', data: 'x' } })),
    );
    expect(next[0]).toMatchObject({ error_code: 200, seq: 1 });
  });
});
