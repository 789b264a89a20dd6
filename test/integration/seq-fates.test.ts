import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AuditReport } from '../../functions/core/audit/ports.js';
import { type DynamoDbCall, type DynamoDbProxy, roundTrips } from '../helpers/dynamodb-proxy.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { lookupSeq, startProxiedPublish } from '../helpers/proxied-publish.js';
import { type loadHandlers, produceEvent, reportLines } from '../helpers/publish-client.js';
import { expectOneFateEach } from '../helpers/seq-fates.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 13: every seq accounted for, and a deadline that bounds DynamoDB. Tally talks to the
// local DynamoDB API through a proxy that loses one answer, fails or stalls the calls a test
// picks, so each fault hits exactly the call it names.
describe('seq fates and deadlines with a faulty DynamoDB', () => {
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
  const lookup = (seq: number) => lookupSeq(api, clusterId(), topic, seq);
  const on = (operation: string, table: string) => (call: DynamoDbCall) =>
    call.operation === operation && call.table === table;
  const fates = () => expectOneFateEach(inject('dynamodbEndpoint'), topic);
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
    ));
    expect((await produce()).statusCode).toBe(200);
  });

  afterAll(async () => {
    await proxy?.close();
  });

  it('answers a retried allocation whose first answer was lost with its own seqs: no hole', async () => {
    proxy.inject('lose-answer', on('UpdateItem', env.TALLY_STREAMS_TABLE as string));
    const first = await produce();
    expect(first.statusCode, first.body).toBe(200);
    expect(reportLines(first)[0]).toMatchObject({ seq: 2 });
    expect(reportLines(await produce())[0]).toMatchObject({ seq: 3 });
    expect(await fates()).toEqual(['ACKED', 'ACKED', 'ACKED']);
  });

  it('records VOID the seqs of a request whose first ledger write failed', async () => {
    // Both attempts the SDK makes of the first write fail; the VOID write after them does not.
    proxy.inject('fail', on('PutItem', env.TALLY_LEDGER_TABLE as string), 2);
    const refused = await produce();
    expect(refused.statusCode).toBe(503);
    expect(await lookup(4)).toMatchObject({
      status: 200,
      body: { records: [{ seq: 4, outcome: 'VOID' }] },
    });
    expect(reportLines(await produce())[0]).toMatchObject({ seq: 5 });
    expect(await fates()).toEqual(['ACKED', 'ACKED', 'ACKED', 'VOID', 'ACKED']);
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

  it('has the audit void a hole past its horizon, and the lookup tell it from a seq never allocated', async () => {
    // An allocation applied whose request died before its first ledger write: seqs 6 and 7.
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
    expect((await lookup(6)).body.message).toMatch(/allocated and has no ledger record yet/);
    expect((await lookup(8)).body.message).toMatch(/never allocated/);

    const { handler: auditNow } = await import('../../functions/audit/http-handler.js');
    const audited = await auditNow(
      httpEvent({ pathParameters: { cluster_id: clusterId() }, body: JSON.stringify({ topic }) }),
      lambdaContext(),
    );
    expect(audited.statusCode, audited.body).toBe(200);
    const findings = (JSON.parse(audited.body ?? '{}') as AuditReport).streams.find(
      (s) => s.stream === topic,
    );
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
    expect(await fates()).toEqual([
      'ACKED',
      'ACKED',
      'ACKED',
      'VOID',
      'ACKED',
      'VOID',
      'VOID',
      'ACKED',
    ]);
  });

  it('answers by the deadline while DynamoDB stalls: 503 before sending, keyed or not', async () => {
    proxy.stallAll(true);
    try {
      const keyless = await timed(() => produce({ 'Tally-Timeout-Ms': '700' }));
      expect(keyless.result.statusCode).toBe(503);
      expect(keyless.result.headers['retry-after']).toBe('1');
      expect(keyless.ms).toBeLessThan(700 + 300);
      const keyed = await timed(() =>
        produce({ 'Tally-Timeout-Ms': '700', 'Idempotency-Key': uniqueName('key') }),
      );
      expect(keyed.result.statusCode, keyed.result.body).toBe(503);
      expect(JSON.parse(keyed.result.body).message).toMatch(/nothing was sent/);
      expect(keyed.ms).toBeLessThan(700 + 300);
    } finally {
      proxy.stallAll(false);
    }
    // The stalled calls never reached the table: nothing was allocated, nothing is missing.
    expect(reportLines(await produce())[0]).toMatchObject({ error_code: 200 });
  });

  it('answers by the deadline when every DynamoDB call is slow: a keyed publish makes 3 in a row before sending', async () => {
    proxy.slowAll(400);
    try {
      const { result, ms } = await timed(() =>
        produce({ 'Tally-Timeout-Ms': '1000', 'Idempotency-Key': uniqueName('key') }),
      );
      // The calls before the send use up the budget: 503, nothing was sent.
      expect(result.statusCode, result.body).toBe(503);
      expect(ms).toBeLessThan(1000 + 300);
    } finally {
      proxy.slowAll(0);
    }
  });

  it('answers by the deadline when DynamoDB stalls after the send: the ledger says UNKNOWN', async () => {
    let ledgerPuts = 0;
    // The second ledger write of the next request (its outcomes) stalls, and the SDK's retry.
    proxy.inject(
      'stall',
      (call) => on('PutItem', env.TALLY_LEDGER_TABLE as string)(call) && ++ledgerPuts >= 2,
      2,
    );
    const { result, ms } = await timed(() => produce({ 'Tally-Timeout-Ms': '1500' }));
    expect(ms).toBeLessThan(1500 + 300);
    const [report] = reportLines(result);
    expect(report).toMatchObject({ error_code: 200 });
    expect(await lookup(report?.seq as number)).toMatchObject({
      body: { records: [{ outcome: 'UNKNOWN' }] },
    });
  });

  it('makes 4 DynamoDB round trips per keyless publish or batch, 5 per keyed one, 1 per replay (horizon 0)', async () => {
    const tables = env as Record<string, string>;
    const name = (call: DynamoDbCall) => {
      const table = Object.entries(tables).find(([, v]) => v === call.table)?.[0] ?? call.table;
      return `${call.operation} ${String(table)
        .replace(/^TALLY_|_TABLE$/g, '')
        .toLowerCase()}`;
    };
    const tripsOf = async (send: () => Promise<{ statusCode: number }>, status = 200) => {
      const before = proxy.calls.length;
      // Every answer 25 ms late: calls sent side by side overlap, calls in a row cannot.
      proxy.slowAll(25);
      try {
        expect((await send()).statusCode).toBe(status);
      } finally {
        proxy.slowAll(0);
      }
      const calls = proxy.calls.slice(before);
      const named = new Map(calls.map((c) => [c, name(c)]));
      return roundTrips(calls.map((c) => ({ ...c, operation: named.get(c) as string })));
    };
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
    expect(await tripsOf(() => api.batch(produceEvent(topic, { entries })), 207)).toEqual(keyless);
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
});
