import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { httpEvent } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import { loadHandlers } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { createTopicsEverywhere } from '../helpers/topics.js';
import { uniqueName } from '../helpers/unique-name.js';

// Nobody gets in without a token; a token gets only its scopes; a publisher only its topics.
// (Local bearer tokens, TALLY_AUTH=tokens; in AWS the same checks read API Gateway's JWT claims.)
describe('access', () => {
  const admin: Admin = testKafka('tally-test-access').admin();
  let api: Awaited<ReturnType<typeof loadHandlers>>;
  let orders: string;
  let other: string;
  const READER = 'Bearer tally-test-token-reader-0001';
  const ORDERS = 'Bearer tally-test-token-orders-0001';

  beforeAll(async () => {
    await usePublishEnv();
    await admin.connect();
    orders = uniqueName('orders').replace(/^test-/, ''); // the publisher may write to orders*
    other = uniqueName('payments');
    await createTopicsEverywhere(admin, [{ topic: orders }, { topic: other }]);
    api = await loadHandlers();
  });
  afterAll(() => admin.disconnect());

  const produce = (topic: string, authorization?: string) =>
    api.produce(
      httpEvent({
        pathParameters: { cluster_id: inject('kafkaClusterId'), topic_name: topic },
        headers: authorization === undefined ? { authorization: '' } : { authorization },
        body: JSON.stringify({ value: { type: 'STRING', data: 'x' } }),
      }),
    );

  it('refuses a request without a token, or with one it does not know, with 401 naming Authorization', async () => {
    for (const authorization of [
      undefined,
      'Bearer not-a-token-of-ours-000',
      'Basic dXNlcjpwYXNz',
    ]) {
      const response = await produce(orders, authorization);
      expect(response.statusCode).toBe(401);
      expect(JSON.parse(response.body)).toMatchObject({ error_code: 401, field: 'Authorization' });
    }
    const restoreRoute = await import('../../functions/reconcile/restore-handler.js');
    const restore = await restoreRoute.handler(
      httpEvent({
        pathParameters: { cluster_id: inject('kafkaClusterId'), group_id: 'g' },
        headers: { authorization: '' },
      }),
      {} as never,
    );
    expect(restore.statusCode).toBe(401);
  });

  it('gives a token only its scopes: a reader cannot publish or restore, but can look up', async () => {
    const refused = await produce(orders, READER);
    expect(refused.statusCode).toBe(403);
    expect(JSON.parse(refused.body).message).toBe(
      'Authorization: reader lacks the publish scope this route needs',
    );
    const lookup = await api.lookup(
      httpEvent({
        pathParameters: { cluster_id: inject('kafkaClusterId') },
        headers: { authorization: READER },
        query: { stream: orders, seq: '1' },
      }),
    );
    expect(lookup.statusCode).toBe(404); // allowed in, nothing published yet
    const { handler } = await import('../../functions/workflows/approvals-handler.js');
    const approvals = await handler(
      httpEvent({
        pathParameters: { cluster_id: inject('kafkaClusterId'), token: 'a'.repeat(24) },
        headers: { authorization: ORDERS },
        body: JSON.stringify({ decision: 'approve' }),
      }),
      {} as never,
    );
    expect(approvals.statusCode).toBe(403); // approvals need the admin scope
  });

  it('keeps a publisher to its own topics, nothing sent elsewhere', async () => {
    const allowed = await produce(orders, ORDERS);
    expect(allowed.statusCode, allowed.body).toBe(200);
    const refused = await produce(other, ORDERS);
    expect(refused.statusCode).toBe(403);
    expect(JSON.parse(refused.body).message).toBe(
      `topic_name: orders-publisher may not publish to ${other}`,
    );
    const [offsets] = await admin.fetchTopicOffsets(other);
    expect(offsets?.high).toBe('0');
  });
});
