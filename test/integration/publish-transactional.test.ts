import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import {
  type DynamoDbCall,
  type DynamoDbProxy,
  startDynamoDbProxy,
} from '../helpers/dynamodb-proxy.js';
import { httpEvent } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import { createTopic, loadHandlers, reportLines } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import {
  ledgerPut as ledgerPutOn,
  seen,
  ledgerItem as storedLedgerItem,
  txnOf,
  whileFaulted as whileProxyFaulted,
} from '../helpers/txn-world.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 33: transactional publish through the v3 routes on the real broker and dynalite (through
// the DynamoDB fault proxy, which picks the one ledger write a case breaks). What a consumer sees
// is read back with read_committed (kafkajs's readUncommitted: false) and read_uncommitted up to
// a marker produced after each case, so an open transaction left behind would fail the read.

const admin = testKafka('tally-test-txn-publish-admin').admin();
let proxy: DynamoDbProxy;
let env: Record<string, string>;
let api: Awaited<ReturnType<typeof loadHandlers>>;
/** A topic TALLY_TRANSACTIONAL_TOPICS names, and one it does not. */
const txnTopic = uniqueName('txn-topic');
let plainTopic: string;
const idPrefix = uniqueName('tally-txn');

beforeAll(async () => {
  proxy = await startDynamoDbProxy(inject('dynamodbEndpoint'));
  env = await usePublishEnv({
    DYNAMODB_ENDPOINT: proxy.endpoint,
    TALLY_DYNAMODB_TIMEOUT_MS: '800',
    TALLY_AUDIT_HORIZON_SECONDS: '0',
    TALLY_TRANSACTIONAL_TOPICS: txnTopic,
    TALLY_TXN_ID_PREFIX: idPrefix,
  });
  await admin.connect();
  const { createTopicsEverywhere } = await import('../helpers/topics.js');
  await createTopicsEverywhere(admin, [{ topic: txnTopic, numPartitions: 1 }]);
  plainTopic = await createTopic(admin, 1);
  vi.resetModules();
  api = await loadHandlers();
});

afterAll(async () => {
  delete process.env.TALLY_TRANSACTIONAL_TOPICS;
  delete process.env.TALLY_TXN_ID_PREFIX;
  await proxy?.close();
  await admin.disconnect();
});

const produce = (topic: string, values: string[], headers: Record<string, string> = {}) =>
  api.produce(
    httpEvent({
      pathParameters: { cluster_id: inject('kafkaClusterId'), topic_name: topic },
      headers,
      body: values.map((v) => JSON.stringify({ value: { type: 'STRING', data: v } })).join(''),
    }),
  );
const batch = (topic: string, values: string[], headers: Record<string, string> = {}) =>
  api.batch(
    httpEvent({
      pathParameters: { cluster_id: inject('kafkaClusterId'), topic_name: topic },
      headers,
      body: JSON.stringify({
        entries: values.map((v, i) => ({ id: `e${i}`, value: { type: 'STRING', data: v } })),
      }),
    }),
  );

/** The ledger item of the block starting at `seq` of `stream`, read directly (not via Tally). */
const ledgerItem = (stream: string, seq: number) =>
  storedLedgerItem(env.TALLY_LEDGER_TABLE as string, stream, seq);
/** A ledger PutItem whose block carries a transaction mark in one of `states`. */
const ledgerPut =
  (...states: string[]) =>
  (call: DynamoDbCall): boolean =>
    // The table is read when a call is matched: cases name their matchers before beforeAll runs.
    ledgerPutOn(env.TALLY_LEDGER_TABLE as string, ...states)(call);
/** Faults `match`'s calls (each attempt of the SDK's) while the first attempt runs only. */
const whileFaulted = <T>(
  fault: 'stall' | 'lose-answer',
  match: (call: DynamoDbCall) => boolean,
  work: () => Promise<T>,
) => whileProxyFaulted(proxy, fault, match, work);

const untilPast = async (deadlineAt: number) => {
  const wait = deadlineAt - Date.now() + 100;
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
};

describe('transactional publish: mode, header and configuration', () => {
  it('refuses Tally-Transactional: false on a topic TALLY_TRANSACTIONAL_TOPICS names, and a value that is not true/false', async () => {
    const off = await produce(txnTopic, ['x'], { 'Tally-Transactional': 'false' });
    expect(off.statusCode).toBe(400);
    expect(off.body).toContain('Tally-Transactional');
    expect(off.body).toContain('TALLY_TRANSACTIONAL_TOPICS');
    const bad = await produce(plainTopic, ['x'], { 'Tally-Transactional': 'yes' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('Tally-Transactional');
    const offBatch = await batch(txnTopic, ['x'], { 'Tally-Transactional': 'FALSE' });
    expect(offBatch.statusCode).toBe(400);
  });

  it('sends a transactional topic’s request in one committed transaction, and the header turns it on elsewhere', async () => {
    const before = (await seen(txnTopic, 'read_committed')).length;
    const answer = await produce(txnTopic, ['a', 'b', 'c']);
    expect(answer.statusCode).toBe(200);
    const lines = reportLines(answer);
    expect(lines.map((l) => l.error_code)).toEqual([200, 200, 200]);
    const committed = (await seen(txnTopic, 'read_committed')).slice(before);
    expect(committed.map((r) => r.value)).toEqual(['a', 'b', 'c']);
    expect(committed.map((r) => r.offset)).toEqual(lines.map((l) => String(l.offset)));
    // Sent under a leased id of the pool, its lease generation in the session.
    expect(committed[0]?.session).toMatch(new RegExp(`^${idPrefix}-\\d+#1$`));
    const block = await ledgerItem(txnTopic, Number(committed[0]?.seq));
    expect(txnOf(block)).toMatchObject({ state: 'COMMITTED' });
    // records:batch and the header on a topic the setting does not name.
    const entries = await batch(plainTopic, ['p', 'q'], { 'Tally-Transactional': 'true' });
    expect(entries.statusCode).toBe(207);
    const plain = await seen(plainTopic, 'read_committed');
    expect(plain.map((r) => r.value)).toEqual(['p', 'q']);
    expect(plain[0]?.session).toMatch(new RegExp(`^${idPrefix}-\\d+#1$`));
  });

  it('leaves an idempotent request as it was: no transaction, no mark in the ledger', async () => {
    const topic = await createTopic(admin, 1);
    const answer = await produce(topic, ['i']);
    expect(answer.statusCode).toBe(200);
    const [record] = await seen(topic, 'read_committed');
    expect(record?.value).toBe('i');
    expect(record?.session).not.toContain(idPrefix);
    const block = await ledgerItem(topic, Number(record?.seq));
    expect(block?.txn).toBeUndefined();
    expect(block?.session).toBe(record?.session);
  });
});

describe('transactional publish: a keyed retry makes the earlier attempt definite', () => {
  it('answers the first attempt’s offsets when it committed and its answer was lost: nothing resent, one copy', async () => {
    const topic = txnTopic;
    const key = uniqueName('key');
    const before = (await seen(topic, 'read_uncommitted')).length;
    // Every write after the commit stalls (its ACKED write, the key's answer): the request ends
    // past its deadline with the ledger saying PREPARED, as a container that died would leave it.
    const started = Date.now();
    const first = await whileFaulted(
      'stall',
      (c) =>
        ledgerPut('COMMITTED')(c) ||
        (c.operation === 'UpdateItem' && c.table === env.TALLY_RESERVATIONS_TABLE),
      () => produce(topic, ['one', 'two'], { 'Idempotency-Key': key, 'Tally-Timeout-Ms': '4000' }),
    );
    const prepared = proxy.calls.filter(ledgerPut('PREPARED')).at(-1);
    expect(prepared, 'a PREPARED write before the commit').toBeDefined();
    const mark = JSON.parse(
      String((prepared?.input.Item as Record<string, { S: string }> | undefined)?.txn?.S),
    ) as { offsets: Array<{ seq: number; offset: string }> };
    const firstSeq = mark.offsets[0]?.seq as number;
    expect(txnOf(await ledgerItem(topic, firstSeq))).toMatchObject({ state: 'PREPARED' });
    // Its answer said ACKED (the commit came back), but neither the ledger nor the key kept it.
    expect(reportLines(first).map((l) => l.error_code)).toEqual([200, 200]);
    await untilPast(started + 4000);

    const retry = await produce(topic, ['one', 'two'], { 'Idempotency-Key': key });
    expect(retry.statusCode).toBe(200);
    const lines = reportLines(retry);
    expect(lines.map((l) => l.error_code)).toEqual([200, 200]);
    expect(lines.map((l) => String(l.offset))).toEqual(mark.offsets.map((o) => o.offset));
    // Nothing was sent again: the log holds the first attempt's two records only.
    const all = (await seen(topic, 'read_uncommitted')).slice(before);
    expect(all.map((r) => r.value)).toEqual(['one', 'two']);
    const committed = (await seen(topic, 'read_committed')).filter(
      (r) => Number(r.seq) >= firstSeq,
    );
    expect(committed.map((r) => [r.value, r.seq])).toEqual([
      ['one', String(firstSeq)],
      ['two', String(firstSeq + 1)],
    ]);
    const block = await ledgerItem(topic, firstSeq);
    expect(txnOf(block)).toMatchObject({ state: 'COMMITTED' });
    // A third try replays the stored answer.
    const again = await produce(topic, ['one', 'two'], { 'Idempotency-Key': key });
    expect(reportLines(again).map((l) => String(l.offset))).toEqual(
      mark.offsets.map((o) => o.offset),
    );
  });

  it.each([
    ['prepared, its answer lost, then aborted', 'lose-answer' as const, ledgerPut('PREPARED')],
    [
      'never prepared (its PREPARED and ABORTED writes stalled)',
      'stall' as const,
      ledgerPut('PREPARED', 'ABORTED'),
    ],
  ])(
    'sends anew under the same seqs when the first attempt was %s: the retry’s copy is the only one read_committed sees',
    async (_case, fault, match) => {
      const topic = await createTopic(admin, 1);
      const key = uniqueName('key');
      // Warm: the container's id leased and its producer initialised, so the faulted attempt
      // gets to its PREPARED write well within its deadline.
      const warm = await produce(topic, ['w'], { 'Tally-Transactional': 'true' });
      expect(warm.statusCode).toBe(200);
      const started = Date.now();
      const first = await whileFaulted(fault, match, () =>
        produce(topic, ['x', 'y'], {
          'Idempotency-Key': key,
          'Tally-Transactional': 'true',
          'Tally-Timeout-Ms': '6000',
        }),
      );
      // Not committed: the first attempt's answer says so (not sent, retriable).
      expect(reportLines(first).map((l) => l.error_code)).toEqual([503, 503]);
      const left = txnOf(await ledgerItem(topic, 2));
      expect(left?.state).toBe(fault === 'stall' ? 'SENDING' : 'PREPARED');
      // Its records are in the log (aborted, or still open until the retry fences the id).
      await untilPast(started + 6000);

      const callsBefore = proxy.calls.length;
      const retry = await produce(topic, ['x', 'y'], {
        'Idempotency-Key': key,
        'Tally-Transactional': 'true',
      });
      // Made definite before the resend: the earlier attempt's seqs recorded NOT_SENT.
      const settled = proxy.calls.slice(callsBefore).filter(ledgerPut('ABORTED'));
      expect(
        settled.map((c) => (c.input.Item as Record<string, { S: string }>).outcomes?.S),
      ).toEqual([expect.stringContaining('not visible to read_committed consumers')]);
      expect(retry.statusCode, retry.body).toBe(200);
      const lines = reportLines(retry);
      expect(lines.map((l) => l.error_code)).toEqual([200, 200]);
      const uncommitted = await seen(topic, 'read_uncommitted');
      expect(uncommitted.map((r) => r.value)).toEqual(['w', 'x', 'y', 'x', 'y']);
      const committed = await seen(topic, 'read_committed');
      expect(committed.map((r) => [r.value, r.seq])).toEqual([
        ['w', '1'],
        ['x', '2'],
        ['y', '3'],
      ]);
      expect(committed.slice(1).map((r) => r.offset)).toEqual(lines.map((l) => String(l.offset)));
      expect(txnOf(await ledgerItem(topic, 2))).toMatchObject({ state: 'COMMITTED' });
    },
  );
});
