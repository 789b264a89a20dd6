import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../../functions/core/shared/errors.js';
import { type CommonConfig, loadTracingConfig } from '../../../functions/platform/config.js';
import { createTracing, type TraceIds } from '../../../functions/platform/tracing.js';
import { httpEvent, lambdaContext, TEST_TOKEN, testAuthEnv } from '../../helpers/http-event.js';
import {
  lambdaTracingEnv,
  newTrace,
  startXrayDaemon,
  type XrayDaemon,
  type XrayDocument,
} from '../../helpers/tracing-daemon.js';

// Tracing (TALLY_TRACING): off, the tracer module is never imported and nothing changes; on, the
// real Powertools Tracer (the devDependency standing in for the Lambda layer) sends each
// invocation's subsegment to the X-Ray daemon, here a UDP socket of the test's own.

describe('TALLY_TRACING', () => {
  it('is off by default, on with "true", and a bad value names the variable', () => {
    expect(loadTracingConfig({})).toEqual({ enabled: false });
    expect(loadTracingConfig({ TALLY_TRACING: 'false' })).toEqual({ enabled: false });
    expect(loadTracingConfig({ TALLY_TRACING: 'true' })).toEqual({ enabled: true });
    expect(() => loadTracingConfig({ TALLY_TRACING: 'yes' })).toThrow(ConfigurationError);
    expect(() => loadTracingConfig({ TALLY_TRACING: 'yes' })).toThrow(/^TALLY_TRACING must be/);
  });
});

describe('tracing off', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('never imports the tracer, adds no middleware and leaves SDK clients alone', () => {
    const load = vi.fn(() => import('@aws-lambda-powertools/tracer'));
    const off = createTracing(false, load, 'svc');
    const add = vi.fn();
    const client = { middlewareStack: { add } };
    expect(off.enabled).toBe(false);
    expect(off.middlewares()).toEqual([]);
    expect(off.captureClient(client)).toBe(client);
    off.annotate({ requestId: 'r-1' });
    expect(load).not.toHaveBeenCalled();
    expect(add).not.toHaveBeenCalled();
  });

  it("is what a container without TALLY_TRACING gets (the handlers' stacks use it)", async () => {
    vi.stubEnv('TALLY_TRACING', '');
    vi.resetModules();
    const { tracing } = await import('../../../functions/platform/tracing.js');
    expect(tracing.enabled).toBe(false);
  });

  it('on without the layer: the first invocation fails, naming TALLY_TRACING', async () => {
    const on = createTracing(
      true,
      () => Promise.reject(new Error("Cannot find package '@aws-lambda-powertools/tracer'")),
      'svc',
    );
    const before = on.middlewares()[0]?.before as (request: object) => Promise<void>;
    await expect(before({ event: {}, context: lambdaContext(), internal: {} })).rejects.toSatisfy(
      (error) => error instanceof ConfigurationError && error.field === 'TALLY_TRACING',
    );
  });
});

describe('tracing on: the real Tracer, documents caught where the X-Ray daemon listens', () => {
  let daemon: XrayDaemon;

  beforeAll(async () => {
    daemon = await startXrayDaemon();
  });
  afterAll(() => daemon.close());

  beforeEach(() => {
    daemon.documents.length = 0;
    for (const [name, value] of Object.entries({
      ...testAuthEnv(),
      ...lambdaTracingEnv(daemon, 'tally-test', 'functions/test-handler.handler'),
      // Other test files share this worker: its http and fetch stay unpatched.
      POWERTOOLS_TRACER_CAPTURE_HTTPS_REQUESTS: 'false',
    })) {
      vi.stubEnv(name, value);
    }
    // A fresh container: tracing.ts reads TALLY_TRACING and loads the tracer at init.
    vi.resetModules();
  });
  afterEach(() => vi.unstubAllEnvs());

  /** Runs one invocation in a trace of its own; its documents once they have arrived. */
  async function traced(invoke: () => Promise<unknown>): Promise<XrayDocument[]> {
    const { traceId, header } = newTrace();
    vi.stubEnv('_X_AMZN_TRACE_ID', header);
    await invoke().catch(() => {});
    const ours = () => daemon.documents.filter((doc) => doc.trace_id === traceId);
    await vi.waitFor(() => expect(ours().some((d) => d.name.startsWith('## '))).toBe(true), {
      timeout: 2000,
      interval: 20,
    });
    return ours();
  }
  const invocationOf = (docs: XrayDocument[]) => {
    const doc = docs.find((d) => d.name === '## functions/test-handler.handler');
    expect(doc).toBeDefined();
    return doc as XrayDocument;
  };

  it('annotates an HTTP invocation with ColdStart, Service and the correlation ids, nothing else', async () => {
    const { httpHandler, json } = await import('../../../functions/platform/http.js');
    const { withCorrelation } = await import('../../../functions/platform/log.js');
    const { tracing } = await import('../../../functions/platform/tracing.js');
    expect(tracing.enabled).toBe(true);
    const recordKey = `key-${randomBytes(6).toString('hex')}`;
    const recordValue = `value-${randomBytes(6).toString('hex')}`;
    const route = httpHandler('publish', async (event) => {
      // What publish does with a request's Idempotency-Key and stream (publish/request.ts).
      withCorrelation({ idempotencyKey: 'order-42', stream: 'orders' });
      // Anything but the correlation ids is dropped, whoever passes it.
      tracing.annotate({ key: recordKey, value: recordValue } as TraceIds);
      return json(200, { echoed: event.body });
    });
    const event = httpEvent({ body: JSON.stringify({ key: recordKey, value: recordValue }) });
    const first = invocationOf(await traced(() => route(event, lambdaContext())));
    expect(first.annotations).toEqual({
      ColdStart: true,
      Service: 'tally-test',
      requestId: event.requestContext.requestId,
      idempotencyKey: 'order-42',
      stream: 'orders',
    });
    expect(first.fault).toBeUndefined();
    expect(first.error).toBeUndefined();
    const second = invocationOf(await traced(() => route(httpEvent(), lambdaContext())));
    expect(second.annotations?.ColdStart).toBe(false);
    // The same guarantees as the logs: no record key or value, no credential, in any document.
    const sent = JSON.stringify(daemon.documents);
    expect(sent).not.toContain(recordKey);
    expect(sent).not.toContain(recordValue);
    expect(sent).not.toContain(TEST_TOKEN);
  });

  it("captures errors: a fault for ours or a dependency's, an error flag for the caller's 4xx", async () => {
    const { httpHandler } = await import('../../../functions/platform/http.js');
    const { taskHandler } = await import('../../../functions/platform/task.js');
    // This container's error classes (the modules were loaded afresh).
    const { DependencyUnavailableError, InvalidInputError } = await import(
      '../../../functions/core/shared/errors.js'
    );
    const execution = 'arn:aws:states:us-east-1:000000000000:execution:offset-repair:e-1';
    const task = taskHandler(async (input: { execution: string; fail?: string }) => {
      if (input.fail === 'input') throw new InvalidInputError('group: 1-255 characters');
      if (input.fail === 'dependency') throw new DependencyUnavailableError('DynamoDB timed out');
      return 'done';
    });
    const ok = invocationOf(await traced(() => task({ execution }, lambdaContext())));
    expect(ok.annotations).toMatchObject({ ColdStart: true, execution });
    expect(ok.fault ?? ok.error).toBeUndefined();

    const refused = invocationOf(
      await traced(() => task({ execution, fail: 'input' }, lambdaContext())),
    );
    expect(refused).toMatchObject({ error: true, annotations: { execution } });
    expect(refused.fault).toBeUndefined();

    const failed = invocationOf(
      await traced(() => task({ execution, fail: 'dependency' }, lambdaContext())),
    );
    expect(failed.fault).toBe(true);
    expect(failed.cause?.exceptions?.[0]).toMatchObject({
      type: 'DependencyUnavailableError',
      message: 'DynamoDB timed out',
    });
    // An HTTP route's unexpected error is a 500 for the caller and a fault in the trace.
    const route = httpHandler('read', async () => {
      throw new Error('bug');
    });
    const crashed = invocationOf(await traced(() => route(httpEvent(), lambdaContext())));
    expect(crashed.fault).toBe(true);
    expect(crashed.cause?.exceptions?.[0]?.message).toBe('bug');
  });

  it('traces the MSK example around the once guard: the work done, then receipts DynamoDB did not take', async () => {
    vi.stubEnv('KAFKA_BROKERS', '127.0.0.1:9');
    vi.stubEnv('DYNAMODB_ENDPOINT', 'http://127.0.0.1:9');
    vi.stubEnv('TALLY_ONCE_TABLE', 'tally-once');
    vi.stubEnv('TALLY_RECEIPTS_TABLE', 'tally-receipts');
    vi.stubEnv('TALLY_RECEIPTS_GROUP', 'billing');
    const { downstreamHandler } = await import('../../../functions/downstream-example/handler.js');
    const worked: number[] = [];
    const handler = downstreamHandler(async (record) => {
      worked.push(record.offset);
    }, 'billing');
    // A record without Tally's headers: passed to the work; its receipt finds no DynamoDB.
    const record = {
      topic: 'orders',
      partition: 0,
      offset: 7,
      timestamp: 0,
      timestampType: 'CREATE_TIME' as const,
      key: '',
      value: '',
      headers: [],
    };
    const event = {
      eventSource: 'aws:kafka' as const,
      eventSourceArn: 'arn:aws:kafka:us-east-1:000000000000:cluster/c/1',
      bootstrapServers: '',
      records: { 'orders-0': [record] },
    };
    const docs = await traced(() => handler(event, lambdaContext()));
    const doc = invocationOf(docs);
    expect(worked).toEqual([7]);
    expect(doc.annotations).toEqual({ ColdStart: true, Service: 'tally-test' });
    expect(doc.fault).toBe(true);
    expect(doc.cause?.exceptions?.[0]?.type).toBe('DependencyUnavailableError');
    const writes = docs.filter((d) => d.parent_id === doc.id && d.name === 'DynamoDB');
    expect(writes.length).toBeGreaterThan(0);
  });

  it('traces AWS SDK calls as subsegments of the invocation (DynamoDB, lazily loaded clients)', async () => {
    const { taskHandler } = await import('../../../functions/platform/task.js');
    const { dynamoDbClients } = await import('../../../functions/platform/dynamodb-clients.js');
    const { lazySdkClient } = await import('../../../functions/adapters/aws/lazy-sdk-client.js');
    const { tracing } = await import('../../../functions/platform/tracing.js');
    const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
    // Nothing listens there: each call fails at once, traced all the same.
    const endpoint = 'http://127.0.0.1:9';
    const task = taskHandler(async () => {
      const { documents: dynamodb } = dynamoDbClients({
        region: 'us-east-1',
        dynamodbEndpoint: endpoint,
        dynamodbTimeoutMs: 500,
      } as CommonConfig);
      await dynamodb
        .send(new GetCommand({ TableName: 'tally-streams', Key: { stream: 'secret-stream-key' } }))
        .catch(() => {});
      const sfn = lazySdkClient(
        { region: 'us-east-1', endpoint },
        () => import('@aws-sdk/client-sfn'),
        (module, config) => new module.SFNClient(config),
        tracing.captureClient,
      );
      const { module, client } = await sfn();
      await client.send(new module.ListStateMachinesCommand({})).catch(() => {});
      return 'done';
    });
    const docs = await traced(() => task({}, lambdaContext()));
    const invocation = invocationOf(docs);
    const calls = docs.filter((d) => d.parent_id === invocation.id);
    expect(calls.map((d) => [d.name, d.aws?.operation])).toEqual(
      expect.arrayContaining([
        ['DynamoDB', 'GetItem'],
        ['SFN', 'ListStateMachines'],
      ]),
    );
    // The table is named; the item's key is not.
    expect(JSON.stringify(docs)).not.toContain('secret-stream-key');
  });
});
