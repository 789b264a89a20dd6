import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TEST_TOKEN } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import { createTopic, loadHandlers, produceEvent } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import {
  lambdaTracingEnv,
  newTrace,
  startXrayDaemon,
  type XrayDaemon,
} from '../helpers/tracing-daemon.js';
import { uniqueName } from '../helpers/unique-name.js';

// A publish with TALLY_TRACING=true, through the real handler, broker and DynamoDB API, with the
// real Tracer (the devDependency standing in for the Powertools layer) sending to a UDP socket
// of the test's own where the X-Ray daemon would listen: the invocation is annotated with the
// request's correlation ids, its DynamoDB calls are subsegments, and no document holds the
// record's key or value or the caller's token (as kafka-scram.test.ts checks of the logs).

describe('publish, traced', () => {
  const admin: Admin = testKafka('tally-test-publish-tracing').admin();
  const handler = 'functions/publish/produce-handler.handler';
  let daemon: XrayDaemon;
  let api: Awaited<ReturnType<typeof loadHandlers>>;

  beforeAll(async () => {
    daemon = await startXrayDaemon();
    await usePublishEnv(lambdaTracingEnv(daemon, 'kafka-tally-test-produce', handler));
    await admin.connect();
    api = await loadHandlers();
  });
  afterAll(async () => {
    await admin.disconnect();
    await daemon.close();
  });

  it('annotates the request id, Idempotency-Key and stream; no key, value or token is sent', async () => {
    const topic = await createTopic(admin, 1);
    const recordKey = `key-${uniqueName('private')}`;
    const recordValue = `value-${uniqueName('private')}`;
    const idempotencyKey = uniqueName('order');
    const { traceId, header } = newTrace();
    process.env._X_AMZN_TRACE_ID = header;
    const event = produceEvent(
      topic,
      {
        key: { type: 'STRING', data: recordKey },
        value: { type: 'STRING', data: recordValue },
      },
      { 'idempotency-key': idempotencyKey },
    );
    const response = await api.produce(event);
    expect(response.statusCode, response.body).toBe(200);

    const ours = () => daemon.documents.filter((doc) => doc.trace_id === traceId);
    const invocation = () => ours().find((doc) => doc.name === `## ${handler}`);
    await vi.waitFor(() => expect(invocation()).toBeDefined(), { timeout: 5000, interval: 50 });
    expect(invocation()?.annotations).toEqual({
      ColdStart: true,
      Service: 'kafka-tally-test-produce',
      requestId: event.requestContext.requestId,
      idempotencyKey,
      stream: topic,
    });
    expect(invocation()?.fault).toBeUndefined();
    // The sequence allocation and the ledger's write-ahead block: DynamoDB subsegments of it.
    const id = invocation()?.id;
    const dynamodb = ours().filter((doc) => doc.parent_id === id && doc.name === 'DynamoDB');
    expect(dynamodb.map((doc) => doc.aws?.operation)).toEqual(
      expect.arrayContaining(['UpdateItem', 'PutItem']),
    );

    const sent = JSON.stringify(daemon.documents);
    expect(sent).not.toContain(recordKey);
    expect(sent).not.toContain(recordValue);
    expect(sent).not.toContain(TEST_TOKEN);
  });
});
