import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { lambdaContext } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import {
  createTopic,
  headerText,
  loadHandlers,
  produceEvent,
  readBack,
  reportLines,
} from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { expectOneFateEach } from '../helpers/seq-fates.js';

// Sequence numbers are dense per stream across containers: each module instance below is a
// separate "container" with its own producer and session, as after separate cold starts.
describe('sequence numbers across handler instances', () => {
  const admin: Admin = testKafka('tally-test-concurrency').admin();
  beforeAll(() => admin.connect());
  afterAll(() => admin.disconnect());

  /** Every record the topic's partitions hold: the sum of their high watermarks (from 0). */
  async function recordsInLog(topic: string): Promise<number> {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
  }

  async function instances(count: number) {
    const loaded = [];
    for (let i = 0; i < count; i++) {
      vi.resetModules();
      loaded.push(await loadHandlers());
    }
    return loaded;
  }

  it('gives 1,000 concurrent single-record requests over 4 instances seqs 1..1000, no gap, no repeat', async () => {
    // 1,000 requests at once from one test process queue up at the local DynamoDB emulator (one
    // Node process on two cores); in Lambda each container sends one request's calls at a time.
    // The counter alone (no leases): each request allocates exactly its own seqs. The wait in
    // that queue is not a request's latency, so the deadline is lifted past API Gateway's 29 s
    // (the deadline has tests of its own, publish-deadline.test.ts): at 29 s one request in a
    // thousand answered 504 UNKNOWN on a loaded machine, though its seq was dense all the same.
    await usePublishEnv({
      TALLY_MAX_CONCURRENT_REQUESTS: '1000',
      TALLY_GATEWAY_TIMEOUT_MS: '120000',
      TALLY_DYNAMODB_TIMEOUT_MS: '30000',
      TALLY_SEQ_LEASE_MAX: '0',
    });
    const topic = await createTopic(admin, 3);
    const apis = await instances(4);
    const responses = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        (apis[i % 4] as (typeof apis)[number]).produce(
          produceEvent(topic, {
            key: { type: 'STRING', data: `k${i}` },
            value: { type: 'STRING', data: `v${i}` },
          }),
          lambdaContext(900_000),
        ),
      ),
    );
    const seqs = responses.map((response) => {
      expect(response.statusCode, response.body).toBe(200);
      return reportLines(response)[0]?.seq as number;
    });
    expect([...seqs].sort((a, b) => a - b)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));

    const records = await readBack(topic, 1000, 60_000);
    // The whole log, not only the records read: no copy beyond them.
    expect(await recordsInLog(topic)).toBe(1000);
    const logged = records
      .map((r) => Number(headerText(r.headers, 'tally.seq')))
      .sort((a, b) => a - b);
    expect(logged).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    const sessions = new Set(records.map((r) => headerText(r.headers, 'tally.session')));
    expect(sessions.size).toBe(4);
  }, 240_000);

  it('with leases: 1,000 concurrent requests over 4 instances, no repeat, and every seq one fate after the audit', async () => {
    const horizonSeconds = 12;
    const env = await usePublishEnv({
      TALLY_MAX_CONCURRENT_REQUESTS: '1000',
      TALLY_DYNAMODB_TIMEOUT_MS: '30000',
      TALLY_AUDIT_HORIZON_SECONDS: String(horizonSeconds),
    });
    const topic = await createTopic(admin, 3);
    const apis = await instances(4);
    // Each instance connected first (a cold connect on a loaded machine takes seconds).
    for (const api of apis) {
      const warm = await api.produce(produceEvent(topic, { value: { type: 'STRING', data: 'w' } }));
      expect(warm.statusCode, warm.body).toBe(200);
    }
    const responses = [];
    // Twenty waves of 50: each request gives itself 8 s, so a lease serves the requests of the
    // next seconds (the horizon bounds how long leased seqs stay usable).
    for (let wave = 0; wave < 20; wave++) {
      responses.push(
        ...(await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            (apis[i % 4] as (typeof apis)[number]).produce(
              produceEvent(
                topic,
                {
                  key: { type: 'STRING', data: `k${wave}-${i}` },
                  value: { type: 'STRING', data: 'v' },
                },
                { 'Tally-Timeout-Ms': '8000' },
              ),
              lambdaContext(900_000),
            ),
          ),
        )),
      );
    }
    const seqs = responses.map((response) => {
      expect(response.statusCode, response.body).toBe(200);
      return reportLines(response)[0]?.seq as number;
    });
    const sent = Date.now();
    expect(new Set(seqs).size).toBe(1000);
    const records = await readBack(topic, 1004, 60_000);
    expect(await recordsInLog(topic)).toBe(1004);
    const logged = records.map((r) => Number(headerText(r.headers, 'tally.seq')));
    expect(new Set(logged).size).toBe(1004);
    for (const seq of seqs) expect(logged).toContain(seq);

    // Seqs leased and never used are holes: past the horizon the audit finds them absent from
    // the log and records them VOID. Every seq up to the counter then has exactly one fate.
    const waited = sent + (horizonSeconds + 1) * 1000 - Date.now();
    if (waited > 0) await new Promise((resolve) => setTimeout(resolve, waited));
    const { handler: auditTask } = await import('../../functions/audit/task-handler.js');
    await auditTask({ topic }, lambdaContext(900_000));
    const fates = await expectOneFateEach(String(env.DYNAMODB_ENDPOINT), topic);
    expect(fates.filter((f) => f === 'ACKED')).toHaveLength(1004);
    expect(fates.every((f) => f === 'ACKED' || f === 'VOID')).toBe(true);
    // Leases sized by demand: unused rests stay a small fraction of the seqs allocated (26 of
    // 1,030 with the earlier sizing, 2.5 %).
    const unused = fates.filter((f) => f === 'VOID').length;
    expect(unused / fates.length, `${unused} of ${fates.length} unused`).toBeLessThanOrEqual(0.05);
  }, 180_000);

  it('answers 429 with Retry-After when an instance is full, allocating no seqs for those', async () => {
    await usePublishEnv({ TALLY_MAX_CONCURRENT_REQUESTS: '2' });
    const topic = await createTopic(admin, 1);
    const [api] = await instances(1);
    if (!api) throw new Error('no instance');
    const responses = await Promise.all(
      Array.from({ length: 12 }, () =>
        api.produce(produceEvent(topic, { value: { type: 'STRING', data: 'x' } })),
      ),
    );
    const refused = responses.filter((r) => r.statusCode === 429);
    const accepted = responses.filter((r) => r.statusCode === 200);
    expect(refused.length).toBeGreaterThan(0);
    expect(accepted.length + refused.length).toBe(12);
    for (const response of refused) {
      expect(response.headers['retry-after']).toBe('1');
      expect(JSON.parse(response.body)).toMatchObject({ error_code: 429, retriable: true });
    }
    const seqs = accepted.map((r) => reportLines(r)[0]?.seq as number).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: accepted.length }, (_, i) => i + 1));
  });
});
