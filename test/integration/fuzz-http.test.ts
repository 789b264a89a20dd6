import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import fc from 'fast-check';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { useFuzzing } from '../helpers/fuzzing.js';
import { lambdaContext, TEST_TOKEN } from '../helpers/http-event.js';

// Property-based fuzzing of every HTTP route of serverless.yml, through its handler as API
// Gateway invokes it, against the real local broker and DynamoDB API: whatever the path, query,
// headers and body, the answer is never a 5xx (nothing here fails: no dependency is down), every
// error is JSON with an error_code and a message naming the field, and nothing is left
// unhandled. Inputs lean towards almost-valid ones, so validation deeper than the first check is
// reached too.
// `npm test` generates 2,000 requests per route; `npm run test:fuzz` the full 10,000 (TALLY_FUZZ_RUNS).
const RUNS = Number(process.env.TALLY_FUZZ_RUNS ?? 2_000);

// biome-ignore lint/suspicious/noExplicitAny: middy handlers of several event types
type Handler = (event: APIGatewayProxyEventV2, context: any) => Promise<unknown>;
interface Route {
  readonly routeKey: string;
  readonly load: () => Promise<Handler>;
  /** The path parameters, in the order of the route's `{name}`s. */
  readonly params: readonly string[];
}

const httpRoute = (routeKey: string, load: () => Promise<Handler>): Route => ({
  routeKey,
  load,
  params: Array.from(routeKey.matchAll(/\{(\w+)\}/g), (match) => match[1] as string),
});

// Spelled out: Vite resolves only literal dynamic imports.
const ROUTES: Record<string, Route> = {
  clusters: httpRoute(
    'GET /v3/clusters/{cluster_id}',
    async () => (await import('../../functions/publish/clusters-handler.js')).handler,
  ),
  produce: httpRoute(
    'POST /v3/clusters/{cluster_id}/topics/{topic_name}/records',
    async () => (await import('../../functions/publish/produce-handler.js')).handler,
  ),
  produceBatch: httpRoute(
    'POST /v3/clusters/{cluster_id}/topics/{topic_name}/records:batch',
    async () => (await import('../../functions/publish/batch-handler.js')).handler,
  ),
  produceV2: httpRoute(
    'POST /topics/{topic_name}',
    async () => (await import('../../functions/publish/v2-handler.js')).handler,
  ),
  lookup: httpRoute(
    'GET /v3/clusters/{cluster_id}/records/lookup',
    async () => (await import('../../functions/publish/lookup-handler.js')).handler,
  ),
  restore: httpRoute(
    'POST /v3/clusters/{cluster_id}/consumer-groups/{group_id}/restore',
    async () => (await import('../../functions/reconcile/restore-handler.js')).handler,
  ),
  consumerGroup: httpRoute(
    'GET /v3/clusters/{cluster_id}/consumer-groups/{group_id}',
    async () => (await import('../../functions/reconcile/consumer-group-handler.js')).handler,
  ),
  burrow: httpRoute(
    'GET /v3/kafka/{cluster}/consumer/{group}/status',
    async () => (await import('../../functions/reconcile/burrow-handler.js')).handler,
  ),
  receipts: httpRoute(
    'POST /v3/clusters/{cluster_id}/receipts',
    async () => (await import('../../functions/receipts/http-handler.js')).handler,
  ),
  auditRead: httpRoute(
    'GET /v3/clusters/{cluster_id}/audits/{audit_id}',
    async () => (await import('../../functions/audit/read-handler.js')).handler,
  ),
  approvals: httpRoute(
    'GET /v3/clusters/{cluster_id}/approvals',
    async () => (await import('../../functions/workflows/approvals-handler.js')).list,
  ),
  approve: httpRoute(
    'POST /v3/clusters/{cluster_id}/approvals/{token}',
    async () => (await import('../../functions/workflows/approvals-handler.js')).handler,
  ),
};
// Run on a smaller share: each valid input does real work (a reconcile, an audit of a topic).
const HEAVY: Record<string, Route> = {
  reconcileNow: httpRoute(
    'POST /v3/clusters/{cluster_id}/reconcile',
    async () => (await import('../../functions/reconcile/http-handler.js')).handler,
  ),
  auditNow: httpRoute(
    'POST /v3/clusters/{cluster_id}/audits',
    async () => (await import('../../functions/audit/http-handler.js')).handler,
  ),
};

describe('HTTP routes under fuzzing', { timeout: 600_000 }, () => {
  const fuzzing = useFuzzing('tally-test-fuzz', 2, { TALLY_AUDIT_HORIZON_SECONDS: '0' });
  const { unhandled } = fuzzing;
  afterAll(() => {
    for (const [route, statuses] of Object.entries(seen))
      process.stderr.write(`fuzz ${route}: ${JSON.stringify(statuses)}\n`);
  });

  const text = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.constantFrom(
      '',
      ' ',
      '%',
      '%E0%A4%A',
      '..',
      '__consumer_offsets',
      'a'.repeat(300),
      '\u0000',
    ),
  );
  // Well-formed data most of the time, so the inputs get past the first checks.
  const validData = fc.oneof(
    fc.record({ type: fc.constant('STRING'), data: fc.string() }),
    fc.record({ type: fc.constant('JSON'), data: fc.jsonValue() }),
    fc.record({ type: fc.constant('BINARY'), data: fc.base64String() }),
  );
  const data = fc.oneof(
    { weight: 2, arbitrary: validData },
    fc.record({
      type: fc.oneof(fc.constantFrom('STRING', 'JSON', 'BINARY'), text),
      data: fc.oneof(fc.string(), fc.base64String(), fc.jsonValue()),
    }),
    fc.jsonValue(),
  );
  const record = fc.record(
    {
      key: data,
      value: data,
      partition_id: fc.oneof(fc.integer({ min: -2, max: 4 }), fc.jsonValue()),
      headers: fc.oneof(
        fc.array(
          fc.record({
            name: fc.oneof(text, fc.constant('tally.seq')),
            value: fc.oneof(fc.base64String(), fc.jsonValue()),
          }),
          { maxLength: 3 },
        ),
        fc.jsonValue(),
      ),
      id: text,
    },
    { requiredKeys: [] },
  );
  const validRecord = fc.record({ key: validData, value: validData }, { requiredKeys: ['value'] });
  const body = fc.oneof(
    fc.constant(undefined),
    { weight: 3, arbitrary: validRecord.map((r) => JSON.stringify(r)) },
    fc
      .array(validRecord, { minLength: 1, maxLength: 3 })
      .map((rs) => JSON.stringify({ entries: rs.map((r, n) => ({ id: `e${n}`, ...r })) })),
    fc
      .array(validRecord, { minLength: 1, maxLength: 3 })
      .map((records) => JSON.stringify({ records })),
    // Receipts and audit requests that are valid, so those routes are fuzzed past validation too.
    fc
      .record({
        group: fc.stringMatching(/^[A-Za-z0-9._:-]{1,20}$/),
        stream: fc.stringMatching(/^[A-Za-z0-9._:-]{1,20}$/),
        seqs: fc.array(
          fc
            .tuple(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 0, max: 1000 }))
            .map(([from, n]) => [from, from + n]),
          { minLength: 1, maxLength: 5 },
        ),
      })
      .map((r) => JSON.stringify(r)),
    fc.constant(null).map(() => JSON.stringify({ topic: fuzzing.topic })),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    text,
    record.map((r) => JSON.stringify(r)),
    fc.array(record, { maxLength: 3 }).map((rs) => rs.map((r) => JSON.stringify(r)).join('')),
    fc.array(record, { maxLength: 3 }).map((entries) => JSON.stringify({ entries })),
    fc.array(record, { maxLength: 3 }).map((records) => JSON.stringify({ records })),
    fc
      .record(
        {
          group: text,
          stream: text,
          topic: text,
          seqs: fc.jsonValue(),
          buckets: fc.jsonValue(),
          decision: fc.oneof(fc.constantFrom('approve', 'reject'), text),
          execute: fc.jsonValue(),
          groups: fc.jsonValue(),
        },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o)),
  );
  // Each header well-formed most of the time, anything otherwise.
  const mostly = <T>(valid: fc.Arbitrary<T>) =>
    fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: text });
  const headers = fc.record(
    {
      'content-type': mostly(
        fc.constantFrom('application/json', 'application/vnd.kafka.json.v2+json', 'text/plain'),
      ),
      'idempotency-key': mostly(fc.stringMatching(/^[\x21-\x7e]{1,40}$/)),
      'tally-stream': mostly(fc.stringMatching(/^[A-Za-z0-9._:-]{1,30}$/)),
      'tally-timeout-ms': mostly(fc.integer({ min: 1, max: 30_000 }).map(String)),
      accept: mostly(fc.constant('text/html')),
      authorization: mostly(fc.constant(`Bearer ${TEST_TOKEN}`)),
    },
    { requiredKeys: ['authorization'] },
  );
  const query = fc.option(
    fc.dictionary(
      fc.constantFrom('stream', 'seq', 'idempotency_key', 'format', 'cursor', 'limit', 'x'),
      text,
      {
        maxKeys: 3,
      },
    ),
    { nil: undefined },
  );

  const eventFor = (route: Route) =>
    fc
      .record({
        params: fc.tuple(
          ...route.params.map((name) =>
            fc.oneof(
              {
                weight: 3,
                arbitrary: fc.constant(
                  name.startsWith('cluster')
                    ? inject('kafkaClusterId')
                    : name === 'topic_name'
                      ? fuzzing.topic
                      : fuzzing.group,
                ),
              },
              { weight: 2, arbitrary: text },
            ),
          ),
        ),
        body,
        base64: fc.boolean(),
        headers,
        query,
      })
      .map(({ params, body, base64, headers, query }): APIGatewayProxyEventV2 => {
        // The path API Gateway would have seen: the route's template with each parameter
        // percent-encoded (routes that dispatch on rawPath, as Burrow's, are fuzzed for real).
        const rawPath = (route.routeKey.split(' ')[1] as string).replace(
          /\{(\w+)\}/g,
          (_, name: string) => encodeURIComponent(params[route.params.indexOf(name)] as string),
        );
        return {
          version: '2.0',
          routeKey: route.routeKey,
          rawPath,
          rawQueryString: '',
          headers: headers as Record<string, string>,
          ...(query && { queryStringParameters: query }),
          pathParameters: Object.fromEntries(
            route.params.map((name, i) => [name, params[i] as string]),
          ),
          requestContext: {
            accountId: 'local',
            apiId: 'local',
            domainName: 'localhost',
            domainPrefix: 'localhost',
            http: {
              method: route.routeKey.split(' ')[0] as string,
              path: rawPath,
              protocol: 'HTTP/1.1',
              sourceIp: '127.0.0.1',
              userAgent: 'fuzz',
            },
            requestId: 'fuzz',
            routeKey: route.routeKey,
            stage: '$default',
            time: '',
            timeEpoch: 0,
          },
          isBase64Encoded: body !== undefined && base64,
          ...(body !== undefined && { body: base64 ? Buffer.from(body).toString('base64') : body }),
        };
      });

  /** Answers per route and status, to show how deep the inputs reached (printed at the end). */
  const seen: Record<string, Record<string, number>> = {};

  /** What every answer must be: a status below 500, and a JSON error naming the field. */
  function check(response: unknown, event: APIGatewayProxyEventV2): void {
    const { statusCode, body } = response as { statusCode?: number; body?: string };
    const tally = seen[event.routeKey] ?? {};
    seen[event.routeKey] = tally;
    tally[String(statusCode)] = (tally[String(statusCode)] ?? 0) + 1;
    const where = `${event.routeKey} ${JSON.stringify(event.pathParameters)} ${JSON.stringify(event.body)?.slice(0, 300)}`;
    expect(statusCode, where).toBeTypeOf('number');
    // The one 5xx allowed: the caller's own Tally-Timeout-Ms too short for Kafka to answer in
    // (503/504, retriable, saying what is known). Nothing else here is failing.
    const ownDeadline = Number(event.headers['tally-timeout-ms']) < 2000;
    const deadlineMissed =
      ownDeadline &&
      (statusCode === 503 || statusCode === 504) &&
      /in time|ran out of time|deadline/.test(String(body));
    if (!deadlineMissed) expect(statusCode as number, `${where} → ${body}`).toBeLessThan(500);
    if ((statusCode as number) < 400) return;
    const error = JSON.parse(body ?? '') as {
      error_code?: unknown;
      error?: unknown;
      message?: unknown;
      field?: unknown;
    };
    if (event.routeKey.startsWith('GET /v3/kafka') && error.error_code === undefined) {
      // Burrow's routes answer what they find in Burrow's own bodies ({error, message, request};
      // an unknown group's status is a 404 with status NOTFOUND, as Burrow answers it); who may
      // call them is answered as on every route.
      expect(error.error, `${where} → ${body}`).toBeTypeOf('boolean');
      expect(error.message, where).toBeTypeOf('string');
      return;
    }
    expect(error.error_code, where).toBeTypeOf('number');
    expect(error.message, where).toBeTypeOf('string');
    if (statusCode === 400) {
      const named =
        typeof error.field === 'string' ||
        /^(?:"(?:[^"\\]|\\.)*"|[^\s:"])+: /.test(String(error.message));
      expect(named, `${where} → ${body}`).toBe(true);
    }
  }

  const fuzz = async (route: Route, runs: number) => {
    const handler = await route.load();
    await fc.assert(
      fc.asyncProperty(eventFor(route), async (event) => {
        check(await handler(event, lambdaContext()), event);
      }),
      { numRuns: runs, endOnFailure: true },
    );
    expect(unhandled).toEqual([]);
  };

  for (const [name, route] of Object.entries(ROUTES)) {
    it(`${name}: ${RUNS.toLocaleString('en')} generated requests, no 5xx, every error names its field`, async () => {
      await fuzz(route, RUNS);
    });
  }
  for (const [name, route] of Object.entries(HEAVY)) {
    it(`${name}: ${Math.ceil(RUNS / 50).toLocaleString('en')} generated requests (each valid one runs a reconcile or an audit)`, async () => {
      await fuzz(route, Math.ceil(RUNS / 50));
    });
  }
});
