import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { AuditReport } from '../../functions/core/audit/ports.js';
import { type DynamoDbProxy, startDynamoDbProxy, tripsOf } from '../helpers/dynamodb-proxy.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import {
  createTopic,
  loadHandlers,
  produceEvent,
  readBack,
  reportLines,
} from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { expectOneFateEach } from '../helpers/seq-fates.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 15: the allocation is the write-ahead record. A request that ends within the audit's
// horizon of its allocation sends before any ledger write, from seqs its container leased; the
// audit of the stream's home topic looks for a hole in the log before voiding it. Here the
// horizon is 6 s and requests give themselves 3 s, so the audit can judge within the test.
describe('publish fast path: one DynamoDB round trip, and every seq still has one fate', () => {
  const HORIZON_MS = 6000;
  let proxy: DynamoDbProxy;
  let topic: string;
  let api: Awaited<ReturnType<typeof loadHandlers>>;
  let env: Record<string, string>;
  const clusterId = () => inject('kafkaClusterId');
  const produce = (headers: Record<string, string> = {}, to = topic) =>
    api.produce(
      httpEvent({
        pathParameters: { cluster_id: clusterId(), topic_name: to },
        headers: { 'Tally-Timeout-Ms': '3000', ...headers },
        body: JSON.stringify({ value: { type: 'STRING', data: 'v' } }),
      }),
    );
  const stepsOf = async (send: () => Promise<{ statusCode: number }>, status = 200) =>
    (await tripsOf(proxy, env, send, status)).map((step) => [...step].sort());
  const audit = async () => {
    const { handler: auditNow } = await import('../../functions/audit/http-handler.js');
    const response = await auditNow(
      httpEvent({ pathParameters: { cluster_id: clusterId() }, body: JSON.stringify({ topic }) }),
      lambdaContext(),
    );
    expect(response.statusCode, response.body).toBe(200);
    return (JSON.parse(response.body ?? '{}') as AuditReport).streams.find(
      (s) => s.stream === topic,
    );
  };
  /**
   * Enough seqs for the container's lease to hold some for the next requests: spare seqs are at
   * most 3 % of those it handed out on the stream, so a batch of 200 leaves 6 at hand.
   */
  const warm = async () => {
    const entries = Array.from({ length: 200 }, (_, i) => ({
      id: `w${i}`,
      value: { type: 'STRING', data: 'w' },
    }));
    const warmed = await api.batch(
      produceEvent(topic, { entries }, { 'Tally-Timeout-Ms': '3000' }),
    );
    expect(warmed.statusCode, warmed.body?.slice(0, 300)).toBe(207);
  };

  beforeAll(async () => {
    proxy = await startDynamoDbProxy(inject('dynamodbEndpoint'));
    env = await usePublishEnv({
      DYNAMODB_ENDPOINT: proxy.endpoint,
      TALLY_DYNAMODB_TIMEOUT_MS: '1000',
      TALLY_AUDIT_HORIZON_SECONDS: String(HORIZON_MS / 1000),
    });
    const admin = testKafka('fast-path-admin').admin();
    await admin.connect();
    topic = await createTopic(admin, 2);
    await admin.disconnect();
    vi.resetModules();
    api = await loadHandlers();
    // Connected to Kafka first, through another stream: the tests' stream starts with no lease.
    const connected = await produce({ 'Tally-Stream': uniqueName('warm-up') });
    expect(connected.statusCode, connected.body).toBe(200);
  });

  afterAll(async () => {
    await proxy?.close();
  });

  it('makes 2 round trips cold and 1 warm without a key; 2 with a key, warm; a replay 2', async () => {
    // Cold: the allocation (which records the stream's home topic), [send], the outcomes, beside
    // them the stream's day mark (once per container, stream and day: 410s name the day).
    expect(await stepsOf(() => produce())).toEqual([
      ['UpdateItem streams'],
      ['PutItem ledger', 'UpdateItem ledger'],
    ]);
    await warm();
    // Warm: seqs from the container's lease, [send], the outcomes; nothing before the send. Now
    // and then the lease runs out and a request allocates the next one (2 round trips).
    const warmTrips = [];
    for (let i = 0; i < 5; i++) warmTrips.push(await stepsOf(() => produce()));
    const oneTrip = warmTrips.filter((t) => JSON.stringify(t) === '[["PutItem ledger"]]');
    expect(oneTrip.length, JSON.stringify(warmTrips)).toBeGreaterThanOrEqual(4);
    for (const trips of warmTrips) expect(trips.length).toBeLessThanOrEqual(2);
    // A batch of 20, warm: the same, whatever its size — its seqs from the lease, or one
    // allocation when the lease cannot cover it; then [send] and the outcomes.
    const entries = Array.from({ length: 20 }, (_, i) => ({
      id: `e${i}`,
      value: { type: 'STRING', data: 'v' },
    }));
    const batchTrips = await stepsOf(
      () => api.batch(produceEvent(topic, { entries }, { 'Tally-Timeout-Ms': '3000' })),
      207,
    );
    expect([
      JSON.stringify([['PutItem ledger']]),
      JSON.stringify([['UpdateItem streams'], ['PutItem ledger']]),
    ]).toContain(JSON.stringify(batchTrips));

    // A key, warm: its claim (the item holds the seqs), [send], the outcomes beside its answer.
    const keys = Array.from({ length: 3 }, () => ({ 'Idempotency-Key': uniqueName('key') }));
    const keyed = [];
    for (const key of keys) keyed.push(await stepsOf(() => produce(key)));
    const twoTrips = keyed.filter(
      (t) =>
        JSON.stringify(t) ===
        JSON.stringify([['PutItem reservations'], ['PutItem ledger', 'UpdateItem reservations']]),
    );
    expect(twoTrips.length, JSON.stringify(keyed)).toBeGreaterThanOrEqual(2);
    // Its replay with seqs at hand: the claim is refused and the item read (AWS sends the item
    // with the refusal: one round trip there). Nothing allocated, nothing sent.
    await warm();
    const replay = await stepsOf(() => produce(keys[0]));
    expect(replay.at(-1)).toEqual(['GetItem reservations']);
    expect(replay.length).toBeLessThanOrEqual(2);
  });

  it('keeps every seq to one fate: sent holes found in the log, a lease left unused voided', async () => {
    // The outcome write of a warm request fails (both SDK attempts): the client is answered,
    // the record is in the log, and the ledger has no block for its seq.
    await warm();
    const ledger = env.TALLY_LEDGER_TABLE as string;
    proxy.inject('fail', (call) => call.operation === 'PutItem' && call.table === ledger, 2);
    const answered = await produce();
    expect(answered.statusCode, answered.body).toBe(200);
    const [line] = reportLines(answered);
    expect(line).toMatchObject({ error_code: 200 });
    const seq = line?.seq as number;

    // Past the horizon: the audit finds that seq in the log (UNKNOWN, then settled ACKED by the
    // next run), and voids the seqs the container leased and never used.
    await new Promise((resolve) => setTimeout(resolve, HORIZON_MS + 500));
    const first = await audit();
    expect(first).toMatchObject({ foundNow: 1, unrecorded: [], lost: [] });
    const second = await audit();
    expect(second).toMatchObject({ unrecorded: [], lost: [], unknownAbsent: [] });
    const fates = await expectOneFateEach(inject('dynamodbEndpoint'), topic);
    expect(fates[seq - 1]).toBe('ACKED');
    // The whole log (the warm-up request's record is another stream's): the stream's seqs in it
    // are exactly its ACKED ones; every other seq is VOID.
    const admin = testKafka('fast-path-offsets').admin();
    await admin.connect();
    const ends = await admin.fetchTopicOffsets(topic);
    await admin.disconnect();
    const total = ends.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
    const logged = (await readBack(topic, total, 30_000))
      .filter((r) => String(r.headers?.['tally.stream']) === topic)
      .map((r) => Number(String(r.headers?.['tally.seq'])));
    expect(new Set(logged).size).toBe(logged.length);
    const acked = fates.flatMap((f, i) => (f === 'ACKED' ? [i + 1] : []));
    expect([...logged].sort((a, b) => a - b)).toEqual(acked);
    expect(fates.every((f) => f === 'ACKED' || f === 'VOID')).toBe(true);
  });

  it('opens the ledger block first for a topic other than the stream’s home', async () => {
    const admin = testKafka('fast-path-admin-2').admin();
    await admin.connect();
    const other = await createTopic(admin, 1);
    await admin.disconnect();
    // The stream of `topic`, published to another topic: that topic's audit never looks for
    // the stream's holes, so nothing goes out before its UNKNOWN block.
    const stream = { 'Tally-Stream': topic };
    const trips = await stepsOf(() => produce(stream, other));
    expect(trips.at(-2)).toEqual(['PutItem ledger']);
    expect(trips.at(-1)).toEqual(['PutItem ledger']);
  });
});
