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

// Sequence numbers are dense per stream across containers: each module instance below is a
// separate "container" with its own producer and session, as after separate cold starts.
describe('sequence numbers across handler instances', () => {
  const admin: Admin = testKafka('tally-test-concurrency').admin();
  beforeAll(() => admin.connect());
  afterAll(() => admin.disconnect());

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
    await usePublishEnv({
      TALLY_MAX_CONCURRENT_REQUESTS: '1000',
      TALLY_DYNAMODB_TIMEOUT_MS: '30000',
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
    const logged = records
      .map((r) => Number(headerText(r.headers, 'tally.seq')))
      .sort((a, b) => a - b);
    expect(logged).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    const sessions = new Set(records.map((r) => headerText(r.headers, 'tally.session')));
    expect(sessions.size).toBe(4);
  }, 120_000);

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
