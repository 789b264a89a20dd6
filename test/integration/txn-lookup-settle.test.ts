import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { DynamoDbProxy } from '../helpers/dynamodb-proxy.js';
import { startDynamoDbProxy } from '../helpers/dynamodb-proxy.js';
import { httpEvent } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import { lookupSeq } from '../helpers/proxied-publish.js';
import { createTopic, loadHandlers, reportLines } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import {
  ledgerItem,
  ledgerPut,
  preparedOffsets,
  seen,
  txnOf,
  untilPast,
  whileFaulted,
} from '../helpers/txn-world.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 33: the lookup route settles a transactional request its first attempt left PREPARED
// (its commit's answer or its outcome write lost), as a keyed retry does, on the real broker and
// dynalite through the DynamoDB fault proxy. The lookup runs in the container that holds the
// recorded id's lease (the same module instance), so it must not fence: it reads the offsets
// read_committed, and writes the definite outcome over the PREPARED block.

const admin = testKafka('tally-test-txn-lookup-admin').admin();
let proxy: DynamoDbProxy;
let env: Record<string, string>;
let api: Awaited<ReturnType<typeof loadHandlers>>;
const idPrefix = uniqueName('tally-txn-lookup');

beforeAll(async () => {
  proxy = await startDynamoDbProxy(inject('dynamodbEndpoint'));
  env = await usePublishEnv({
    DYNAMODB_ENDPOINT: proxy.endpoint,
    // Long enough for a loaded machine's reads; a lost answer still times out within a request.
    TALLY_DYNAMODB_TIMEOUT_MS: '3000',
    TALLY_AUDIT_HORIZON_SECONDS: '0',
    TALLY_TXN_ID_PREFIX: idPrefix,
  });
  await admin.connect();
  vi.resetModules();
  api = await loadHandlers();
});

afterAll(async () => {
  delete process.env.TALLY_TXN_ID_PREFIX;
  await proxy?.close();
  await admin.disconnect();
});

const produce = (topic: string, values: string[], headers: Record<string, string>) =>
  api.produce(
    httpEvent({
      pathParameters: { cluster_id: inject('kafkaClusterId'), topic_name: topic },
      headers: { 'Tally-Transactional': 'true', ...headers },
      body: values.map((v) => JSON.stringify({ value: { type: 'STRING', data: v } })).join(''),
    }),
  );
const lookupKey = async (key: string) => {
  const response = await api.lookup(
    httpEvent({
      pathParameters: { cluster_id: inject('kafkaClusterId') },
      query: { idempotency_key: key },
    }),
  );
  return { status: response.statusCode, body: JSON.parse(response.body) };
};
const ledger = () => env.TALLY_LEDGER_TABLE as string;
/** The faulted first attempt's deadline: time for its commit on a loaded machine. */
const FIRST_MS = 8000;

/**
 * A keyed transactional request whose commit went through and every write after it stalled (its
 * COMMITTED write, the key's answer): the ledger keeps PREPARED, as a container that died after
 * EndTxn leaves it. Its topic, key, start and the PREPARED offsets.
 */
async function committedButPrepared(values: string[]) {
  const topic = await createTopic(admin, 1);
  const key = uniqueName('key');
  // Warm: the id leased and its producer initialised, so the request reaches its commit in time.
  expect((await produce(topic, ['w'], {})).statusCode).toBe(200);
  const started = Date.now();
  const first = await whileFaulted(
    proxy,
    'stall',
    (c) =>
      ledgerPut(ledger(), 'COMMITTED')(c) ||
      (c.operation === 'UpdateItem' && c.table === env.TALLY_RESERVATIONS_TABLE),
    () => produce(topic, values, { 'Idempotency-Key': key, 'Tally-Timeout-Ms': String(FIRST_MS) }),
  );
  expect(reportLines(first).map((l) => l.error_code)).toEqual(values.map(() => 200));
  const offsets = preparedOffsets(proxy, ledger());
  expect(txnOf(await ledgerItem(ledger(), topic, 2))).toMatchObject({ state: 'PREPARED' });
  return { topic, key, started, offsets };
}

describe('the lookup route settles a PREPARED transactional request', () => {
  it('answers ACKED at the prepared offsets when the commit went through, and the ledger says COMMITTED', async () => {
    const { topic, key, offsets } = await committedButPrepared(['a', 'b']);
    const bySeq = await lookupSeq(api, inject('kafkaClusterId'), topic, 2);
    expect(bySeq.status, JSON.stringify(bySeq.body)).toBe(200);
    expect(bySeq.body.records).toEqual([
      expect.objectContaining({
        seq: 2,
        outcome: 'ACKED',
        partition_id: 0,
        offset: Number(offsets[0]?.offset),
      }),
    ]);
    const item = await ledgerItem(ledger(), topic, 2);
    expect(txnOf(item)).toMatchObject({ state: 'COMMITTED' });
    // By key: both seqs, from the ledger as now written.
    const byKey = await lookupKey(key);
    expect(byKey.status, JSON.stringify(byKey.body)).toBe(200);
    expect(
      byKey.body.records.map((r: Record<string, unknown>) => [r.seq, r.outcome, r.offset]),
    ).toEqual(offsets.map((o) => [o.seq, 'ACKED', Number(o.offset)]));
    // The log holds each record once (nothing was resent), visible to read_committed.
    const committed = await seen(topic, 'read_committed');
    expect(committed.map((r) => [r.value, r.seq])).toEqual([
      ['w', '1'],
      ['a', '2'],
      ['b', '3'],
    ]);
  });

  it('answers NOT_SENT, not visible to read_committed consumers, when the transaction was aborted', async () => {
    const topic = await createTopic(admin, 1);
    const key = uniqueName('key');
    expect((await produce(topic, ['w'], {})).statusCode).toBe(200);
    // The PREPARED write applied, its answer lost: the request aborts, its ABORTED write is
    // refused (the block is no longer the version it opened): the ledger keeps PREPARED.
    const first = await whileFaulted(proxy, 'lose-answer', ledgerPut(ledger(), 'PREPARED'), () =>
      produce(topic, ['x', 'y'], { 'Idempotency-Key': key, 'Tally-Timeout-Ms': '9000' }),
    );
    expect(reportLines(first).map((l) => l.error_code)).toEqual([503, 503]);
    expect(txnOf(await ledgerItem(ledger(), topic, 2))).toMatchObject({ state: 'PREPARED' });

    const byKey = await lookupKey(key);
    expect(byKey.status, JSON.stringify(byKey.body)).toBe(200);
    expect(byKey.body.records.map((r: Record<string, unknown>) => r.outcome)).toEqual([
      'NOT_SENT',
      'NOT_SENT',
    ]);
    expect(byKey.body.records[0].message).toContain('not visible to read_committed consumers');
    const item = await ledgerItem(ledger(), topic, 2);
    expect(txnOf(item)).toMatchObject({ state: 'ABORTED' });
    expect(String(item?.outcomes)).toContain('not visible to read_committed consumers');
    // Asked again: the same answer, from the ledger.
    const again = await lookupSeq(api, inject('kafkaClusterId'), topic, 3);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.records[0]).toMatchObject({ outcome: 'NOT_SENT' });
    // Nothing of it is visible; the aborted copies are in the log.
    expect((await seen(topic, 'read_committed')).map((r) => r.value)).toEqual(['w']);
    expect((await seen(topic, 'read_uncommitted')).map((r) => r.value)).toEqual(['w', 'x', 'y']);
  });

  it('ends with one definite outcome when a lookup races a keyed retry', async () => {
    const { topic, key, started, offsets } = await committedButPrepared(['r', 's']);
    await untilPast(started + FIRST_MS);
    const [retry, looked] = await Promise.all([
      produce(topic, ['r', 's'], { 'Idempotency-Key': key }),
      lookupKey(key),
    ]);
    // The retry answers the first attempt's offsets (settled by itself or by the lookup).
    expect(retry.statusCode, retry.body).toBe(200);
    expect(reportLines(retry).map((l) => String(l.offset))).toEqual(offsets.map((o) => o.offset));
    // The lookup answers the same, definite.
    expect(looked.status, JSON.stringify(looked.body)).toBe(200);
    expect(
      looked.body.records.map((r: Record<string, unknown>) => [r.outcome, String(r.offset)]),
    ).toEqual(offsets.map((o) => ['ACKED', o.offset]));
    expect(txnOf(await ledgerItem(ledger(), topic, 2))).toMatchObject({ state: 'COMMITTED' });
    const all = await seen(topic, 'read_uncommitted');
    expect(all.map((r) => r.value)).toEqual(['w', 'r', 's']);
  });
});
