import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { LinkedFindings } from '../../functions/core/audit/ports.js';
import { auditNow } from '../helpers/audit-client.js';
import type { DynamoDbProxy } from '../helpers/dynamodb-proxy.js';
import { startDynamoDbProxy } from '../helpers/dynamodb-proxy.js';
import { httpEvent } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import { createTopic, loadHandlers, reportLines } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { ledgerPut, seen, untilPast, whileFaulted } from '../helpers/txn-world.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 33: the audit reads a transactional topic read_committed and reports the copies of an
// aborted transaction apart (abortedCopies), never as duplicates or losses; on the real broker
// and dynalite, the aborted attempt made through the DynamoDB fault proxy (its PREPARED write
// applied, the answer lost: the request aborts its transaction).

const admin = testKafka('tally-test-txn-audit-admin').admin();
let proxy: DynamoDbProxy;
let env: Record<string, string>;
let api: Awaited<ReturnType<typeof loadHandlers>>;

beforeAll(async () => {
  proxy = await startDynamoDbProxy(inject('dynamodbEndpoint'));
  env = await usePublishEnv({
    DYNAMODB_ENDPOINT: proxy.endpoint,
    TALLY_DYNAMODB_TIMEOUT_MS: '800',
    TALLY_AUDIT_HORIZON_SECONDS: '0',
    TALLY_TXN_ID_PREFIX: uniqueName('tally-txn-audit'),
  });
  await admin.connect();
  vi.resetModules();
  api = await loadHandlers();
  // The audit (imported on its first run) talks to dynalite directly, with time for a loaded
  // machine: only the publish handlers' writes are faulted.
  process.env.DYNAMODB_ENDPOINT = inject('dynamodbEndpoint');
  process.env.TALLY_DYNAMODB_TIMEOUT_MS = '5000';
});

afterAll(async () => {
  delete process.env.TALLY_TXN_ID_PREFIX;
  delete process.env.TALLY_DYNAMODB_TIMEOUT_MS;
  await proxy?.close();
  await admin.disconnect();
});

const produce = (topic: string, values: string[], headers: Record<string, string> = {}) =>
  api.produce(
    httpEvent({
      pathParameters: { cluster_id: inject('kafkaClusterId'), topic_name: topic },
      headers: { 'Tally-Transactional': 'true', ...headers },
      body: values.map((v) => JSON.stringify({ value: { type: 'STRING', data: v } })).join(''),
    }),
  );

/** A keyed attempt whose transaction is aborted (its records stay in the log, invisible). */
async function abortedAttempt(topic: string, key: string, values: string[]) {
  const started = Date.now();
  const first = await whileFaulted(
    proxy,
    'lose-answer',
    ledgerPut(env.TALLY_LEDGER_TABLE as string, 'PREPARED'),
    () => produce(topic, values, { 'Idempotency-Key': key, 'Tally-Timeout-Ms': '6000' }),
  );
  expect(reportLines(first).map((l) => l.error_code)).toEqual(values.map(() => 503));
  return started;
}

const streamOf = (report: { streams: readonly LinkedFindings[] }, stream: string) => {
  const found = report.streams.find((s) => s.stream === stream);
  expect(found, `stream ${stream} in the report`).toBeDefined();
  return found as LinkedFindings;
};

describe('the audit of a transactional topic', () => {
  it('reports the aborted copies of a request sent again under the same seqs apart: no duplicate, no loss', async () => {
    const topic = await createTopic(admin, 1);
    const key = uniqueName('key');
    expect((await produce(topic, ['w'])).statusCode).toBe(200);
    const started = await abortedAttempt(topic, key, ['x', 'y']);
    await untilPast(started + 6000);
    // The retry settles the aborted attempt (NOT_SENT) and sends x, y again under seqs 2, 3.
    const retry = await produce(topic, ['x', 'y'], { 'Idempotency-Key': key });
    expect(retry.statusCode, retry.body).toBe(200);
    const all = await seen(topic, 'read_uncommitted');
    expect(all.map((r) => [r.value, r.seq])).toEqual([
      ['w', '1'],
      ['x', '2'],
      ['y', '3'],
      ['x', '2'],
      ['y', '3'],
    ]);

    const report = await auditNow(topic);
    expect(report.complete).toBe(true);
    const stream = streamOf(report, topic);
    expect(stream.producerDuplicates).toEqual([]);
    expect(stream.lost).toEqual([]);
    expect(stream.abortedCopies).toBe(2);
    // The aborted copies are the first two of x and y, named with their place and session.
    expect(stream.aborted?.map((c) => [c.seq, String(c.offset)]).sort()).toEqual([
      [2, all[1]?.offset],
      [3, all[2]?.offset],
    ]);
    expect(stream.aborted?.[0]?.session).toBe(all[1]?.session);
    // A later run reads nothing new and still reports them (checkpointed).
    const again = await auditNow(topic);
    expect(streamOf(again, topic).abortedCopies).toBe(2);
    expect(streamOf(again, topic).producerDuplicates).toEqual([]);
  });

  it('reads to the end of a partition holding only an aborted transaction, and counts its copies', async () => {
    // Warm on another topic (the container's id leased, its producer initialised), so that the
    // faulted attempt reaches its PREPARED write in time and this topic holds nothing else: the
    // audit's fetch holds only the aborted records and a marker, which kafkajs filters whole
    // (its runner calls no eachBatch for it).
    expect((await produce(await createTopic(admin, 1), ['w'])).statusCode).toBe(200);
    const topic = await createTopic(admin, 1);
    await abortedAttempt(topic, uniqueName('key'), ['x', 'y']);

    const report = await auditNow(topic);
    expect(report.complete).toBe(true);
    const stream = streamOf(report, topic);
    expect(stream.abortedCopies).toBe(2);
    expect(stream.aborted?.map((c) => c.seq).sort()).toEqual([1, 2]);
    expect(stream.producerDuplicates).toEqual([]);
    // (Read back after the audit: the readers' markers would have been in its fetch.)
    expect(await seen(topic, 'read_committed')).toEqual([]);
    expect((await seen(topic, 'read_uncommitted')).map((r) => r.value)).toEqual(['x', 'y']);
  });
});
