import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AuditReport } from '../../functions/core/audit/ports.js';
import {
  type DynamoDbCall,
  type DynamoDbProxy,
  tripsOf as tripsWith,
} from '../helpers/dynamodb-proxy.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { lookupSeq, startProxiedPublish } from '../helpers/proxied-publish.js';
import { type loadHandlers, produceEvent, reportLines } from '../helpers/publish-client.js';
import { expectOneFateEach, seqFates } from '../helpers/seq-fates.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 13: every seq accounted for, and a deadline that bounds DynamoDB. Tally talks to the
// local DynamoDB API through a proxy that loses one answer, fails or stalls the calls a test
// picks, so each fault hits exactly the call it names. Both ways publish runs: ledger first
// (TALLY_AUDIT_HORIZON_SECONDS=0, no leases: every hole is judged at once) and the default fast
// path (a 5-minute horizon, seqs leased per container, no ledger write before the send: a seq
// sent whose outcome write is lost, and a lease's unused rest, are holes no audit judges within
// the horizon; the lookup says "no ledger record yet", and no seq ever has two fates).
describe.each([
  ['ledger first', true],
  ['on the default fast path', false],
])('seq fates and deadlines with a faulty DynamoDB, %s', (_mode, ledgerFirst: boolean) => {
  let proxy: DynamoDbProxy;
  let topic: string;
  let api: Awaited<ReturnType<typeof loadHandlers>>;
  let env: Record<string, string>;
  const clusterId = () => inject('kafkaClusterId');
  const produce = (headers: Record<string, string> = {}) =>
    api.produce(
      httpEvent({
        pathParameters: { cluster_id: clusterId(), topic_name: topic },
        headers,
        body: JSON.stringify({ value: { type: 'STRING', data: 'v' } }),
      }),
    );
  const lookup = (seq: number, stream = topic) => lookupSeq(api, clusterId(), stream, seq);
  const on = (operation: string, table: string) => (call: DynamoDbCall) =>
    call.operation === operation && call.table === table;
  /**
   * The fates of the topic's seqs, one a seq from 1 ('none' for a hole). Ledger first every seq
   * up to the counter has exactly one; on the fast path the seqs past `expected` are a lease's
   * unused rest (holes within the horizon), and none has two fates.
   */
  const fates = async (expected: readonly string[]) => {
    if (ledgerFirst) return expectOneFateEach(inject('dynamodbEndpoint'), topic);
    const { fates: all } = await seqFates(inject('dynamodbEndpoint'), topic);
    expect(all.filter((f) => f.length > 1)).toEqual([]);
    const rest = all.slice(expected.length);
    expect(rest, 'a lease rest with a fate within the horizon').toEqual(rest.map(() => []));
    return all.slice(0, expected.length).map((f) => f[0] ?? 'none');
  };
  /** The stream's counter: the last seq handed out, to any container. */
  const counter = async (stream = topic) =>
    (await seqFates(inject('dynamodbEndpoint'), stream)).allocated;
  const timed = async <T>(work: () => Promise<T>) => {
    const started = performance.now();
    const result = await work();
    return { result, ms: performance.now() - started };
  };

  beforeAll(async () => {
    ({ proxy, env, topic, api } = await startProxiedPublish(
      inject('dynamodbEndpoint'),
      'seq-fates',
      1000,
      { ledgerFirst },
    ));
    expect((await produce()).statusCode).toBe(200);
  });

  afterAll(async () => {
    await proxy?.close();
  });

  it('answers a retried allocation whose first answer was lost with its own seqs: no hole', async () => {
    // The container's second request allocates (its first leased nothing beyond its own seq).
    proxy.inject('lose-answer', on('UpdateItem', env.TALLY_STREAMS_TABLE as string));
    const first = await produce();
    expect(first.statusCode, first.body).toBe(200);
    expect(reportLines(first)[0]).toMatchObject({ seq: 2 });
    expect(reportLines(await produce())[0]).toMatchObject({ seq: 3 });
    expect(await fates(['ACKED', 'ACKED', 'ACKED'])).toEqual(['ACKED', 'ACKED', 'ACKED']);
  });

  it('records VOID the seqs of a request whose first ledger write failed; on the fast path that write is after the send', async () => {
    // Both attempts the SDK makes of the first write fail; the VOID write after them does not.
    proxy.inject('fail', on('PutItem', env.TALLY_LEDGER_TABLE as string), 2);
    const refused = await produce();
    if (ledgerFirst) {
      expect(refused.statusCode).toBe(503);
      expect(await lookup(4)).toMatchObject({
        status: 200,
        body: { records: [{ seq: 4, outcome: 'VOID' }] },
      });
      expect(reportLines(await produce())[0]).toMatchObject({ seq: 5 });
      expect(await fates(['ACKED', 'ACKED', 'ACKED', 'VOID', 'ACKED'])).toEqual([
        'ACKED',
        'ACKED',
        'ACKED',
        'VOID',
        'ACKED',
      ]);
      return;
    }
    // The failed write is the outcomes' (the first on this path): the record was sent and
    // acknowledged, the answer says so, and the ledger holds nothing for it, neither VOID nor a
    // wrong fate: a hole the audit finds in the log once the horizon has passed.
    expect(refused.statusCode, refused.body).toBe(200);
    const [sent] = reportLines(refused);
    expect(sent).toMatchObject({ error_code: 200, seq: 4, offset: 3 });
    expect(await lookup(4)).toMatchObject({
      status: 404,
      body: { message: expect.stringMatching(/allocated and has no ledger record yet/) },
    });
    expect(reportLines(await produce())[0]).toMatchObject({ seq: 5 });
    expect(await fates(['ACKED', 'ACKED', 'ACKED', 'none', 'ACKED'])).toEqual([
      'ACKED',
      'ACKED',
      'ACKED',
      'none',
      'ACKED',
    ]);
  });

  it('says a stream nothing was published to has allocated nothing (not "1..0")', async () => {
    const unknown = uniqueName('no-such-stream');
    const response = await api.lookup(
      httpEvent({
        pathParameters: { cluster_id: clusterId() },
        query: { stream: unknown, seq: '1' },
      }),
    );
    expect(response.statusCode).toBe(404);
    const { message } = JSON.parse(response.body) as { message: string };
    expect(message).toContain(`stream ${unknown} has allocated no seqs`);
    expect(message).not.toMatch(/1\.\.0/);
  });

  it('has the audit void a hole past its horizon (and leave one within it), the lookup telling it from a seq never allocated', async () => {
    // An allocation applied whose request died before its first ledger write: two seqs after
    // the counter (on the fast path, past a lease rest this container may still use).
    const before = await counter();
    const direct = new DynamoDBClient({
      endpoint: inject('dynamodbEndpoint'),
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await direct.send(
      new UpdateItemCommand({
        TableName: env.TALLY_STREAMS_TABLE,
        Key: { stream: { S: topic } },
        UpdateExpression: 'ADD lastSeq :two',
        ExpressionAttributeValues: { ':two': { N: '2' } },
      }),
    );
    direct.destroy();
    const dead = [before + 1, before + 2];
    expect((await lookup(before + 1)).body.message).toMatch(
      /allocated and has no ledger record yet/,
    );
    expect((await lookup(before + 3)).body.message).toMatch(/never allocated/);

    const { handler: auditNow } = await import('../../functions/audit/http-handler.js');
    const audited = await auditNow(
      httpEvent({ pathParameters: { cluster_id: clusterId() }, body: JSON.stringify({ topic }) }),
      lambdaContext(),
    );
    expect(audited.statusCode, audited.body).toBe(200);
    const findings = (JSON.parse(audited.body ?? '{}') as AuditReport).streams.find(
      (s) => s.stream === topic,
    );
    if (ledgerFirst) {
      expect(dead).toEqual([6, 7]);
      expect(findings).toMatchObject({
        allocated: 7,
        void: 3,
        voidedNow: 2,
        unrecorded: [],
        produced: 4,
        inLog: 4,
        lost: [],
      });
      expect(await lookup(6)).toMatchObject({ body: { records: [{ outcome: 'VOID' }] } });
      expect(reportLines(await produce())[0]).toMatchObject({ seq: 8 });
      expect(await fates([])).toEqual([
        'ACKED',
        'ACKED',
        'ACKED',
        'VOID',
        'ACKED',
        'VOID',
        'VOID',
        'ACKED',
      ]);
      return;
    }
    // Within the horizon nothing is judged: seq 4 (sent, its outcome write lost), the lease's
    // rest and the dead request's seqs stay holes, none VOID, none placed.
    expect(findings).toMatchObject({
      allocated: before + 2,
      void: 0,
      voidedNow: 0,
      produced: 4,
      inLog: 5,
      lost: [],
    });
    const holes = [4, ...Array.from({ length: before + 2 - 5 }, (_, i) => 6 + i)];
    const unrecorded = (findings?.unrecorded ?? []).flatMap(([from, to]) =>
      Array.from({ length: to - from + 1 }, (_, i) => from + i),
    );
    expect(unrecorded).toEqual(holes);
    expect((await lookup(before + 1)).body.message).toMatch(
      /allocated and has no ledger record yet/,
    );
    // The next request takes the lease's rest if it holds one, else allocates after the dead
    // seqs: never one of them.
    const next = reportLines(await produce())[0]?.seq as number;
    expect(dead).not.toContain(next);
    expect(next === 6 || next === before + 3, `seq ${next}`).toBe(true);
    const { fates: all } = await seqFates(inject('dynamodbEndpoint'), topic);
    expect(all.filter((f) => f.length > 1)).toEqual([]);
    expect(all[next - 1]).toEqual(['ACKED']);
    for (const seq of dead) expect(all[seq - 1]).toEqual([]);
  });

  it('answers by the deadline while DynamoDB stalls: 503 before sending, keyed or not', async () => {
    // A stream this container holds no seqs of: the allocation (or the key's read) comes first.
    const stream = uniqueName('stalled');
    proxy.stallAll(true);
    try {
      const keyless = await timed(() =>
        produce({ 'Tally-Timeout-Ms': '700', 'Tally-Stream': stream }),
      );
      expect(keyless.result.statusCode).toBe(503);
      expect(keyless.result.headers['retry-after']).toBe('1');
      expect(keyless.ms).toBeLessThan(700 + 300);
      const keyed = await timed(() =>
        produce({
          'Tally-Timeout-Ms': '700',
          'Tally-Stream': stream,
          'Idempotency-Key': uniqueName('key'),
        }),
      );
      expect(keyed.result.statusCode, keyed.result.body).toBe(503);
      expect(JSON.parse(keyed.result.body).message).toMatch(/nothing was sent/);
      expect(keyed.ms).toBeLessThan(700 + 300);
    } finally {
      proxy.stallAll(false);
    }
    // The stalled calls never reached the table: nothing was allocated, nothing is missing.
    expect(await counter(stream)).toBe(0);
    expect(reportLines(await produce({ 'Tally-Stream': stream }))[0]).toMatchObject({
      error_code: 200,
      seq: 1,
    });
  });

  if (!ledgerFirst) {
    it('sends from seqs at hand while DynamoDB stalls: no call before the send, Kafka answers by the deadline', async () => {
      // Requests in a row until the container holds a lease of the stream (the counter past the
      // last seq used): the demand of the last second sizes it.
      const stream = uniqueName('leased');
      let last = 0;
      for (let i = 0; i < 10 && (await counter(stream)) <= last; i++) {
        last = reportLines(await produce({ 'Tally-Stream': stream }))[0]?.seq as number;
      }
      const allocated = await counter(stream);
      expect(allocated, 'no lease after 10 requests in a row').toBeGreaterThan(last);
      proxy.stallAll(true);
      let sent: Awaited<ReturnType<typeof timed<Awaited<ReturnType<typeof produce>>>>>;
      try {
        sent = await timed(() => produce({ 'Tally-Timeout-Ms': '1500', 'Tally-Stream': stream }));
      } finally {
        proxy.stallAll(false);
      }
      // Written: its outcome write was cut by the deadline and never reached the table.
      expect(sent.result.statusCode, sent.result.body).toBe(200);
      expect(reportLines(sent.result)[0]).toMatchObject({ error_code: 200, seq: last + 1 });
      expect(sent.ms).toBeLessThan(1500 + 300);
      expect(await counter(stream)).toBe(allocated);
      expect(await lookup(last + 1, stream)).toMatchObject({
        status: 404,
        body: { message: expect.stringMatching(/allocated and has no ledger record yet/) },
      });
    });
  }

  it('answers by the deadline when every DynamoDB call is slow: a keyed publish makes 3 in a row before sending', async () => {
    proxy.slowAll(400);
    try {
      const { result, ms } = await timed(() =>
        produce({
          'Tally-Timeout-Ms': '1000',
          'Idempotency-Key': uniqueName('key'),
          // No seqs at hand: the key's read, the allocation and the claim, each 400 ms.
          'Tally-Stream': uniqueName('slow'),
        }),
      );
      // The calls before the send use up the budget: 503, nothing was sent.
      expect(result.statusCode, result.body).toBe(503);
      expect(ms).toBeLessThan(1000 + 300);
    } finally {
      proxy.slowAll(0);
    }
  });

  it('answers by the deadline when DynamoDB stalls after the send: UNKNOWN ledger first, no record on the fast path', async () => {
    let ledgerPuts = 0;
    // The outcomes' write of the next request stalls, and the SDK's retry: its second ledger
    // write ledger first (after the UNKNOWN block), its first on the fast path.
    const outcomesWrite = ledgerFirst ? 2 : 1;
    proxy.inject(
      'stall',
      (call) =>
        on('PutItem', env.TALLY_LEDGER_TABLE as string)(call) && ++ledgerPuts >= outcomesWrite,
      2,
    );
    // 4 s: the calls before the send fit it at load too (1.5 s was used up by them beside a
    // second suite: a 503 before the send, not the case under test). The stall lasts for ever:
    // only the deadline ends the request.
    const { result, ms } = await timed(() => produce({ 'Tally-Timeout-Ms': '4000' }));
    expect(result.statusCode, result.body).toBe(200);
    expect(ms).toBeLessThan(4000 + 1000);
    const [report] = reportLines(result);
    expect(report).toMatchObject({ error_code: 200 });
    expect(ledgerPuts).toBeGreaterThanOrEqual(outcomesWrite);
    expect(await lookup(report?.seq as number)).toMatchObject(
      ledgerFirst
        ? { body: { records: [{ outcome: 'UNKNOWN' }] } }
        : { status: 404, body: { message: expect.stringMatching(/no ledger record yet/) } },
    );
  });

  // Ledger first only: publish-fast-path.test.ts counts the fast path's round trips.
  if (ledgerFirst) {
    it('makes 4 DynamoDB round trips per keyless publish or batch, 5 per keyed one, 1 per replay (horizon 0)', async () => {
      const tripsOf = (send: () => Promise<{ statusCode: number }>, status = 200) =>
        tripsWith(proxy, env, send, status);
      // No key: the allocation, the write-ahead block (UNKNOWN), the look for a VOID range holding
      // it (with a horizon of 0 the audit may judge the seqs at once: the stream's VOID-range key and,
      // for per-seq VOIDs from before sharding, its own key, side by side), [send], the outcomes.
      const keyless = [
        ['UpdateItem streams'],
        ['PutItem ledger'],
        ['Query ledger', 'Query ledger'],
        ['PutItem ledger'],
      ];
      expect(await tripsOf(() => produce())).toEqual(keyless);
      // A batch of 20 makes the same four, whatever its size.
      const entries = Array.from({ length: 20 }, (_, i) => ({
        id: `e${i}`,
        value: { type: 'STRING', data: 'v' },
      }));
      expect(await tripsOf(() => api.batch(produceEvent(topic, { entries })), 207)).toEqual(
        keyless,
      );
      // A key: its item read, the allocation, its claim beside the write-ahead block, [send], the
      // outcomes beside the stored answer. One item per key: no other idempotency table.
      const key = { 'Idempotency-Key': uniqueName('key') };
      const first = await tripsOf(() => produce(key));
      expect(first.map((step) => [...step].sort())).toEqual([
        ['GetItem reservations'],
        ['UpdateItem streams'],
        ['PutItem ledger', 'PutItem reservations'],
        ['Query ledger', 'Query ledger'],
        ['PutItem ledger', 'UpdateItem reservations'],
      ]);
      // The retry reads the stored answer: one round trip, nothing sent.
      expect(await tripsOf(() => produce(key))).toEqual([['GetItem reservations']]);
    });
  }
});
