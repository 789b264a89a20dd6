// Tally's HTTP API as an OpenAPI 3.1 document: every httpApi route of serverless.yml, with the
// bodies the handlers write and their error shapes. Served by functions/openapi/handler.ts at
// GET /openapi.json; the integration tests check every request and answer against it
// (test/helpers/openapi-hook.ts), and a unit test that serverless.yml has the same routes.
// Only the openapi function imports it: no other bundle carries it.
import { ref, type Schema, schemas } from './schemas.js';

type Parameter = {
  readonly [extension: `x-${string}`]: unknown;
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
  readonly required?: boolean;
  readonly description?: string;
  readonly schema: Schema;
};
type Content = Record<string, { readonly schema: Schema; readonly [extension: string]: unknown }>;
export type Response = {
  readonly description: string;
  readonly content?: Content;
  readonly headers?: Record<string, { readonly schema: Schema; readonly description?: string }>;
};
export type Operation = {
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly security: ReadonlyArray<Record<string, readonly string[]>>;
  readonly parameters?: readonly Parameter[];
  readonly requestBody?: { readonly required: boolean; readonly content: Content };
  readonly responses: Record<string, Response>;
};
export type Method = 'get' | 'post';
export type OpenApiDocument = {
  readonly openapi: string;
  readonly info: Record<string, unknown>;
  readonly paths: Record<string, Partial<Record<Method, Operation>>>;
  readonly components: { readonly schemas: Record<string, Schema> } & Record<string, unknown>;
  readonly [field: string]: unknown;
};

/**
 * A media type whose body is JSON texts one after another rather than one JSON document: a
 * request is a concatenation of JSON values (any whitespace between), an answer one JSON text per
 * line, each followed by CRLF. `schema` describes each value.
 */
export const JSON_SEQUENCE = 'x-tally-json-sequence';
/** A parameter the handler does not read when the parameter this names is given. */
export const IGNORED_WITH = 'x-tally-ignored-with';

const path = (name: string, schema: Schema = { type: 'string', minLength: 1 }): Parameter => ({
  name,
  in: 'path',
  required: true,
  schema,
});
const clusterId = path('cluster_id');
/** `?cursor=&limit=` of a paged answer (platform/http-pages.ts): `next` links the next page. */
const pageParameters = (items: string, defaultLimit: number, maxLimit: number): Parameter[] => [
  {
    name: 'cursor',
    in: 'query',
    description: `the cursor in the \`next\` link of the page before (opaque); without it, the first page`,
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,4096}$' },
  },
  {
    name: 'limit',
    in: 'query',
    description: `${items} per page (default ${defaultLimit}): ${maxLimit} at the longest names stay under Lambda's 6 MB response`,
    schema: { type: 'string', pattern: '^[1-9][0-9]{0,3}$' },
  },
];
const idSchema = { type: 'string', minLength: 1, maxLength: 255 };
const topicName = path('topic_name', { type: 'string', pattern: '^[A-Za-z0-9._-]{1,249}$' });
const publishHeaders: Parameter[] = [
  {
    name: 'Idempotency-Key',
    in: 'header',
    description: 'a retry with the same key reuses its sequence numbers',
    schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
  },
  {
    name: 'Tally-Stream',
    in: 'header',
    description: 'the stream of sequence numbers (default: the topic)',
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,249}$' },
  },
  {
    name: 'Tally-Timeout-Ms',
    in: 'header',
    description: "the caller's deadline, below API Gateway's 29 s",
    schema: { type: 'string', pattern: '^[1-9][0-9]{0,15}$' },
  },
  {
    name: 'Tally-Transactional',
    in: 'header',
    description:
      "true: the request's records are sent in one Kafka transaction, committed before ACKED (needs TALLY_TXN_IDS_TABLE); false on a topic TALLY_TRANSACTIONAL_TOPICS names is a 400; absent: the topic's setting",
    schema: { type: 'string', pattern: '^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$' },
  },
];

const json = (schema: Schema): Content => ({ 'application/json': { schema } });
const ok = (description: string, schema: Schema): Response => ({
  description,
  content: json(schema),
});
const problem = (description: string): Response => ({
  description,
  content: json(ref('Error')),
});
/** Sent with an error that says when to retry (platform/http.ts, a TallyError's retryAfterSeconds). */
const retryAfter = {
  'Retry-After': {
    description: 'seconds to wait before retrying',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
};
const withRetryAfter = (response: Response): Response => ({ ...response, headers: retryAfter });

/**
 * The errors platform/http.ts answers for any route, whatever the route does: every route needs
 * a caller with a scope (401, 403) and may fail (500). A route that calls a dependency (DynamoDB,
 * Kafka, Step Functions) may also find it unreachable or throttling (503) or run out of time
 * (504: middy ends the invocation just before Lambda's timeout, the outcome is unknown).
 */
function standardErrors(dependencies: 'calls dependencies' | 'no dependency', outOfTime?: string) {
  return {
    '401': problem('no token, or one that is not valid (field: Authorization)'),
    '403': problem('the caller lacks the scope this route needs'),
    '500': problem('a fault on our side, a dependency refusing the call, or a configuration error'),
    ...(dependencies === 'calls dependencies' && {
      '503': withRetryAfter(
        problem('a dependency (DynamoDB, Kafka, Step Functions) could not be reached or throttled'),
      ),
      '504': problem(
        outOfTime ?? 'the function ran out of time: what it was doing may or may not be done',
      ),
    }),
  } satisfies Record<string, Response>;
}
/** The route's own refusals (described, or whole responses), then the standard errors. */
const errors = (
  refusals: Record<string, string | Response>,
  dependencies: Parameters<typeof standardErrors>[0] = 'calls dependencies',
  outOfTime?: string,
): Record<string, Response> => ({
  ...standardErrors(dependencies, outOfTime),
  ...Object.fromEntries(
    Object.entries(refusals).map(([status, r]) => [status, typeof r === 'string' ? problem(r) : r]),
  ),
});
const notFoundCluster = { '404': 'another cluster id than the one this API serves' };
const badPath = { '400': 'a path parameter that is not valid (field names it)' };
/** What a route under /v3/clusters/{cluster_id} that reads no body may refuse. */
const clusterRouteErrors = errors({ ...badPath, ...notFoundCluster });
/** Either a JWT with the route's scope (or tally/admin), or a SigV4-signed IAM caller. */
const scopes = (...names: string[]) => [
  ...names.map((scope) => ({ tallyJwt: [`tally/${scope}`] })),
  { tallyJwt: ['tally/admin'] },
  { tallyIam: [] },
];
const read = scopes('read');
const admin = [{ tallyJwt: ['tally/admin'] }, { tallyIam: [] }];

const produceLines: Content = {
  'application/json': {
    schema: { anyOf: [ref('ProduceReport'), ref('Error')] },
    [JSON_SEQUENCE]: true,
  },
};
const sentOutOfTime =
  'the function ran out of time (outcome UNKNOWN): records may have been sent; look them up by Idempotency-Key or stream and seq';
const publishRefusals = {
  '400':
    'malformed JSON, a charset that is not known (Content-Type), or a v2 body that is not {records: [...]} or has too many records',
  '403': 'the caller lacks the publish scope, or may not publish to this topic',
  '404': 'unknown cluster (v3) or topic (40403)',
  '409': withRetryAfter(
    problem('the same Idempotency-Key is in flight, or raced by another request'),
  ),
  '413':
    "the body is over TALLY_MAX_REQUEST_BYTES, a v3 stream has more records than TALLY_MAX_BATCH_ENTRIES, or the answer to its records could be over Lambda's 6,291,556-byte response limit (the message names the largest count that fits with this topic, stream and ids); nothing was sent",
  '415': 'a Content-Type other than application/json (v3), as REST Proxy answers',
  '422':
    'a batch that cannot be produced as a whole (42208: empty, no entries field ("Empty batch."), too many entries, ids not distinct or not valid; 422: a batch body that is not {entries: [object, ...]} or has another top-level field), an empty v3 body (42206), a v2 record that is not valid, or an Idempotency-Key reused with another body',
  '429': withRetryAfter(
    problem('this instance is at TALLY_MAX_CONCURRENT_REQUESTS: nothing was sent'),
  ),
};
const publishErrors = errors(publishRefusals, 'calls dependencies', sentOutOfTime);
/**
 * A single record not written on Tally's side (5xx) has its code as the status, with its line:
 * 500 too, for a dependency refusing Tally itself (a schema registry refusing its credentials).
 */
const produceErrors: Record<string, Response> = Object.fromEntries(
  Object.entries(publishErrors).map(([status, response]) => [
    status,
    Number(status) < 500
      ? response
      : {
          ...response,
          description: `${response.description}; or a single record's report`,
          content: produceLines,
        },
  ]),
);
produceErrors['502'] = {
  description: "a single record's report: the broker refused it (FAILED)",
  content: produceLines,
};
const produce: Operation = {
  operationId: 'produceRecords',
  summary: 'Produce one record, or several concatenated (streaming)',
  description:
    "Confluent REST Proxy v3 produce. The body is one record object or several JSON objects one after another. The answer is one report per record, each a JSON line followed by CRLF, with content-type application/json, and status 200 as REST Proxy answers: a record that cannot be produced (bad field 400, partition 40402, schema 422 / 42206, too large 413, refused by the broker) is its line's error_code. A single record not written for a reason on Tally's side (500: a dependency refusing Tally, 502, 503, 504) makes the status. Errors before any record is read (auth, Content-Type, cluster, topic, size, 429) are one error object with no CRLF.",
  tags: ['publish'],
  security: scopes('publish'),
  parameters: [clusterId, topicName, ...publishHeaders],
  requestBody: {
    required: true,
    content: { 'application/json': { schema: ref('ProduceRecord'), [JSON_SEQUENCE]: true } },
  },
  responses: {
    '200': {
      description: 'one report per record: where it landed, or why it was not written',
      content: produceLines,
    },
    ...produceErrors,
  },
};

const v2Body = { schema: ref('V2Request') };

const burrowGet = (
  operationId: string,
  summary: string,
  answer: Schema,
  notFound?: Schema,
  parameters: Parameter[] = [],
): { get: Operation } => ({
  get: {
    operationId,
    summary,
    tags: ['burrow'],
    security: read,
    parameters,
    responses: {
      '200': ok("Burrow's answer", answer),
      ...errors(
        notFound
          ? {
              '404': {
                description: "Burrow's not-found answer (Tally's own errors otherwise)",
                content: json({ anyOf: [notFound, ref('Error')] }),
              },
            }
          : {},
      ),
    },
  },
});
/** `operation` with a 413 in Burrow's error body (`why`). */
const tooLarge = (operation: { get: Operation }, why: string): { get: Operation } => ({
  get: {
    ...operation.get,
    responses: {
      ...operation.get.responses,
      '413': { description: why, content: json(ref('BurrowError')) },
    },
  },
});
const burrowCluster = path('cluster');
const burrowGroup = path('group');
const burrowStatus = (operationId: string, summary: string) =>
  burrowGet(
    operationId,
    summary,
    ref('BurrowStatus'),
    { anyOf: [ref('BurrowNotFound'), ref('BurrowStatus')] },
    [burrowCluster, burrowGroup],
  );

export const openApiDocument: OpenApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Tally',
    version: '0.1.0',
    summary: 'Publish to Kafka from AWS Lambda and know what happened to every record.',
    description:
      "Confluent REST Proxy v3 produce (plus v2 / Strimzi bridge), a ledger lookup, consumer-group reconcile with Burrow's read API, audits, receipts and workflow approvals. Every error is `{error_code, message, retriable, field?}`.",
    license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
  },
  jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
  servers: [{ url: '/', description: 'the API Gateway HTTP API (or npm start locally)' }],
  tags: [
    { name: 'publish' },
    { name: 'reconcile' },
    { name: 'burrow', description: "Burrow's read API, Burrow's bodies" },
    { name: 'audit' },
    { name: 'workflows' },
    { name: 'meta' },
  ],
  paths: {
    '/openapi.json': {
      get: {
        operationId: 'getOpenApiDocument',
        summary: 'This document (OpenAPI 3.1), or its OpenAPI 3.0 rendering',
        tags: ['meta'],
        security: read,
        parameters: [
          {
            name: 'version',
            in: 'query',
            description:
              '`3.0` for the OpenAPI 3.0 rendering (API Gateway import, older tools); default 3.1',
            schema: { type: 'string', enum: ['3.0', '3.1'] },
          },
        ],
        responses: {
          '200': ok('the OpenAPI document', {
            type: 'object',
            properties: {
              openapi: { type: 'string', enum: ['3.1.0', '3.0.3'] },
              info: { type: 'object', required: ['title', 'version'] },
              paths: { type: 'object' },
              components: { type: 'object', required: ['schemas', 'securitySchemes'] },
            },
            required: ['openapi', 'info', 'paths', 'components'],
          }),
          ...errors({ '400': 'a version other than 3.0 or 3.1 (field: version)' }, 'no dependency'),
        },
      },
    },
    '/v3/clusters': {
      get: {
        operationId: 'listClusters',
        summary: 'The cluster Tally publishes to',
        tags: ['publish'],
        security: read,
        responses: { '200': ok('one cluster', ref('ClusterList')), ...errors({}) },
      },
    },
    '/v3/clusters/{cluster_id}': {
      get: {
        operationId: 'getCluster',
        summary: 'The cluster, by its Kafka cluster id',
        tags: ['publish'],
        security: read,
        parameters: [clusterId],
        responses: {
          '200': ok('the cluster', ref('Cluster')),
          ...clusterRouteErrors,
        },
      },
    },
    '/v3/clusters/{cluster_id}/topics/{topic_name}/records': { post: produce },
    '/v3/clusters/{cluster_id}/topics/{topic_name}/records:batch': {
      post: {
        operationId: 'produceBatch',
        summary: 'Produce a batch: 207 with successes and failures by entry id',
        tags: ['publish'],
        security: scopes('publish'),
        parameters: [clusterId, topicName, ...publishHeaders],
        requestBody: { required: true, content: json(ref('BatchRequest')) },
        responses: {
          '207': ok('each entry acknowledged or not', ref('BatchResponse')),
          ...publishErrors,
        },
      },
    },
    '/topics/{topic_name}': {
      post: {
        operationId: 'produceV2',
        summary: 'REST Proxy v2 / Strimzi bridge produce',
        description:
          'application/vnd.kafka.json.v2+json (or application/json): keys and values are JSON; application/vnd.kafka.binary.v2+json: base64. Any other Content-Type: 415.',
        tags: ['publish'],
        security: scopes('publish'),
        parameters: [topicName, ...publishHeaders],
        requestBody: {
          required: true,
          content: {
            'application/vnd.kafka.json.v2+json': v2Body,
            'application/vnd.kafka.binary.v2+json': v2Body,
            'application/json': v2Body,
          },
        },
        responses: {
          '200': ok('an offset or an error per record', ref('V2Response')),
          ...publishErrors,
          '415': problem('a Content-Type other than the three above'),
        },
      },
    },
    '/v3/clusters/{cluster_id}/records/lookup': {
      get: {
        operationId: 'lookupRecord',
        summary: 'What the ledger knows of a record: by stream and seq, or by Idempotency-Key',
        tags: ['publish'],
        security: read,
        parameters: [
          clusterId,
          {
            name: 'stream',
            in: 'query',
            description: 'with seq; not read when idempotency_key is given',
            schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,249}$' },
            [IGNORED_WITH]: 'idempotency_key',
          },
          {
            name: 'seq',
            in: 'query',
            description: 'with stream; not read when idempotency_key is given',
            schema: { type: 'string', pattern: '^[1-9][0-9]*$' },
            [IGNORED_WITH]: 'idempotency_key',
          },
          {
            name: 'idempotency_key',
            in: 'query',
            description: 'instead of stream and seq',
            schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
          },
        ],
        responses: {
          '200': ok('the records and their outcomes', ref('RecordLookup')),
          ...errors({
            '400': 'stream, seq or idempotency_key missing or not valid',
            '404': 'unknown cluster, a key never published, or a seq without a ledger record',
            '410':
              'the record was recorded and its ledger block is past TALLY_LEDGER_RETENTION_DAYS: the message names the day it expired',
          }),
        },
      },
    },
    '/v3/clusters/{cluster_id}/reconcile': {
      post: {
        operationId: 'reconcileNow',
        summary:
          'Run reconcile now; each group without its partitions, by pages (with `cursor`, runs nothing: the next page of that run)',
        tags: ['reconcile'],
        security: admin,
        parameters: [clusterId, ...pageParameters('groups', 1000, 5000)],
        responses: {
          '200': ok('the run and its first page of groups, or a next page of a run', {
            oneOf: [ref('ReconcileReport'), ref('ReconcilePage')],
          }),
          ...errors({
            '400': 'a bad path parameter, limit or cursor (field names it)',
            '404':
              'another cluster id than the one this API serves, or a cursor of a run no longer kept (a day)',
          }),
        },
      },
    },
    '/v3/clusters/{cluster_id}/consumer-groups/{group_id}/restore': {
      post: {
        operationId: 'restoreGroup',
        summary:
          'Plan (dry run, default) or execute a return to the last good offsets, by pages of partitions (with `cursor`, only reads)',
        tags: ['reconcile'],
        security: admin,
        parameters: [
          clusterId,
          path('group_id', idSchema),
          ...pageParameters('partitions', 2000, 5000),
        ],
        requestBody: {
          required: false,
          content: json({
            type: 'object',
            properties: { execute: { type: 'boolean' } },
            additionalProperties: false,
          }),
        },
        responses: {
          '200': ok('the plan, and what was executed', ref('RestoreResult')),
          ...errors({
            '400':
              'a body other than {"execute": true|false}, a bad group id, limit or cursor, or execute with a cursor',
            '404':
              'another cluster id than the one this API serves, or a cursor of an execution no longer kept',
            '409': 'executing while the group has members (GROUP_NOT_EMPTY)',
          }),
        },
      },
    },
    '/v3/clusters/{cluster_id}/consumer-groups/{group_id}/acknowledge': {
      post: {
        operationId: 'acknowledgeFindings',
        summary: "Acknowledge a group's held LOST / OUT_OF_RANGE findings (no body)",
        tags: ['reconcile'],
        security: admin,
        parameters: [clusterId, path('group_id', idSchema)],
        responses: {
          '200': ok('the partitions acknowledged', ref('Acknowledged')),
          ...errors({
            '400': 'a body, or a bad group id',
            ...notFoundCluster,
            '409': 'a reconcile run saved the same history first: retry',
          }),
        },
      },
    },
    '/v3/clusters/{cluster_id}/consumer-groups/{group_id}': {
      get: {
        operationId: 'getConsumerGroup',
        summary: 'Confluent v3 consumer group, with consumers and lag_summary',
        tags: ['reconcile'],
        security: read,
        parameters: [clusterId, path('group_id', idSchema)],
        responses: {
          '200': ok('from the latest reconcile report', ref('ConsumerGroup')),
          ...errors({ ...badPath, '404': 'unknown cluster, or a group no run has reported' }),
        },
      },
    },
    '/burrow/admin': {
      get: {
        operationId: 'burrowAdmin',
        summary: "Burrow's health check",
        tags: ['burrow'],
        security: read,
        responses: {
          '200': {
            description: 'GOOD',
            content: { 'text/plain': { schema: { const: 'GOOD' } } },
          },
          ...errors({}, 'no dependency'),
        },
      },
    },
    '/v3/kafka': burrowGet('burrowClusters', 'Clusters (one)', ref('BurrowClusters')),
    '/v3/kafka/{cluster}': burrowGet(
      'burrowCluster',
      'The cluster module',
      ref('BurrowCluster'),
      ref('BurrowNotFound'),
      [burrowCluster],
    ),
    '/v3/kafka/{cluster}/consumer': {
      get: {
        operationId: 'burrowConsumers',
        summary: 'Consumer groups: whole, as Burrow answers, or by pages',
        description:
          "Burrow answers the whole list; so does Tally while it fits Lambda's 6,291,556-byte response, and answers 413 past that. With `limit` or `cursor` (Tally's extension) a page of the groups in the list's order, ending earlier where the next id would take it past that limit, with `next`, the link to the page after.",
        tags: ['burrow'],
        security: read,
        parameters: [
          burrowCluster,
          {
            name: 'cursor',
            in: 'query',
            description:
              'the cursor in the `next` link of the page before (opaque); without it, the first page',
            schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,4096}$' },
          },
          {
            name: 'limit',
            in: 'query',
            description:
              'groups per page (default 10,000, at most 20,000: 5.2 MB at 255-character ids)',
            schema: { type: 'string', pattern: '^[1-9][0-9]{0,4}$' },
          },
        ],
        responses: {
          '200': ok("Burrow's answer, or a page of it", {
            anyOf: [ref('BurrowNames'), ref('BurrowConsumerPage')],
          }),
          ...errors({
            '400': {
              description: "a bad `limit` or `cursor`, in Burrow's error body (message names it)",
              content: json(ref('BurrowError')),
            },
            '404': {
              description: "Burrow's not-found answer (Tally's own errors otherwise)",
              content: json({ anyOf: [ref('BurrowNotFound'), ref('Error')] }),
            },
            '413': {
              description:
                "the whole list is over Lambda's 6,291,556-byte response: Burrow's error body naming the limit and `?limit=&cursor=`",
              content: json(ref('BurrowError')),
            },
          }),
        },
      },
    },
    '/v3/kafka/{cluster}/consumer/{group}': burrowGet(
      'burrowConsumer',
      "A group's partitions and offsets",
      ref('BurrowConsumer'),
      ref('BurrowNotFound'),
      [burrowCluster, burrowGroup],
    ),
    '/v3/kafka/{cluster}/consumer/{group}/status': burrowStatus(
      'burrowStatus',
      "A group's status, partitions that are not OK",
    ),
    '/v3/kafka/{cluster}/consumer/{group}/lag': burrowStatus(
      'burrowLag',
      "A group's status with every partition",
    ),
    '/v3/kafka/{cluster}/topic': tooLarge(
      burrowGet(
        'burrowTopics',
        'Topics some group reads',
        ref('BurrowNames'),
        ref('BurrowNotFound'),
        [burrowCluster],
      ),
      "the list is over Lambda's 6,291,556-byte response (some 24,000 topics of 249 characters): Burrow's error body naming the limit",
    ),
    '/v3/kafka/{cluster}/topic/{topic}': burrowGet(
      'burrowTopic',
      "A topic's log end offsets",
      ref('BurrowTopic'),
      ref('BurrowNotFound'),
      [burrowCluster, path('topic')],
    ),
    '/v3/kafka/{cluster}/topic/{topic}/consumers': tooLarge(
      burrowGet(
        'burrowTopicConsumers',
        'Groups reading a topic',
        ref('BurrowNames'),
        ref('BurrowNotFound'),
        [burrowCluster, path('topic')],
      ),
      "the groups reading the topic are over Lambda's 6,291,556-byte response (some 24,000 ids of 255 characters): Burrow's error body naming the limit",
    ),
    '/v3/config': burrowGet(
      'burrowConfig',
      "Burrow's main config, from Tally's settings",
      ref('BurrowConfig'),
    ),
    '/v3/config/storage': burrowGet(
      'burrowConfigStorages',
      'Storage modules',
      ref('BurrowModules'),
    ),
    '/v3/config/storage/{name}': burrowGet(
      'burrowConfigStorage',
      'A storage module',
      ref('BurrowModule'),
      ref('BurrowNotFound'),
      [path('name')],
    ),
    '/v3/config/evaluator': burrowGet(
      'burrowConfigEvaluators',
      'Evaluator modules',
      ref('BurrowModules'),
    ),
    '/v3/config/evaluator/{name}': burrowGet(
      'burrowConfigEvaluator',
      'A evaluator module',
      ref('BurrowModule'),
      ref('BurrowNotFound'),
      [path('name')],
    ),
    '/v3/config/cluster': burrowGet(
      'burrowConfigClusters',
      'Cluster modules',
      ref('BurrowModules'),
    ),
    '/v3/config/cluster/{cluster}': burrowGet(
      'burrowConfigCluster',
      'A cluster module',
      ref('BurrowCluster'),
      ref('BurrowNotFound'),
      [path('cluster')],
    ),
    '/v3/config/consumer': burrowGet(
      'burrowConfigConsumers',
      'Consumer modules',
      ref('BurrowModules'),
    ),
    '/v3/config/consumer/{name}': burrowGet(
      'burrowConfigConsumer',
      'A consumer module',
      ref('BurrowModule'),
      ref('BurrowNotFound'),
      [path('name')],
    ),
    '/v3/config/notifier': burrowGet(
      'burrowConfigNotifiers',
      'Notifier modules',
      ref('BurrowModules'),
    ),
    '/v3/config/notifier/{name}': burrowGet(
      'burrowConfigNotifier',
      'A notifier module',
      ref('BurrowModule'),
      ref('BurrowNotFound'),
      [path('name')],
    ),
    '/v3/admin/loglevel': burrowGet('burrowLogLevel', 'The log level', ref('BurrowLogLevel')),
    '/v3/clusters/{cluster_id}/receipts': {
      post: {
        operationId: 'postReceipts',
        summary: 'Receipts from a consumer: seq runs of a stream, or counts per time bucket',
        tags: ['audit'],
        security: scopes('receipts'),
        parameters: [clusterId],
        requestBody: { required: true, content: json(ref('ReceiptsRequest')) },
        responses: {
          '202': ok('stored', ref('ReceiptsAccepted')),
          ...errors({
            '400': 'invalid input (field names it)',
            ...notFoundCluster,
            '413': 'more than 10,000 seq runs',
          }),
        },
      },
    },
    '/v3/clusters/{cluster_id}/audits/{audit_id}': {
      get: {
        operationId: 'getAudit',
        summary: 'A stored audit report, as JSON (by pages of streams) or as an HTML page',
        tags: ['audit'],
        security: read,
        parameters: [
          clusterId,
          path('audit_id', idSchema),
          ...pageParameters('streams', 20, 25),
          {
            name: 'format',
            in: 'query',
            description: '`html` for the page (or send Accept: text/html); anything else: JSON',
            schema: { type: 'string' },
          },
        ],
        responses: {
          '200': {
            description: 'the report',
            content: {
              'application/json': { schema: ref('AuditReport') },
              'text/html': {
                schema: {
                  type: 'string',
                  minLength: 1,
                  description: 'one self-contained page (charset=utf-8, no scripts)',
                },
              },
            },
          },
          ...errors({
            '400': 'a bad path parameter, limit or cursor (field names it)',
            '404': 'unknown cluster or audit',
          }),
        },
      },
    },
    '/v3/clusters/{cluster_id}/audits': {
      post: {
        operationId: 'auditNow',
        summary:
          'Audit a topic now (ledger vs log vs receipts), stored under its auditId; its first page of streams, `next` the stored report',
        tags: ['audit'],
        security: admin,
        parameters: [clusterId, pageParameters('streams', 20, 25)[1] as Parameter],
        requestBody: { required: true, content: json(ref('AuditRequest')) },
        responses: {
          '200': ok('the report', ref('AuditReport')),
          ...errors({
            '400': 'not {topic, groups?}, an illegal topic name, a bad limit, or a cursor',
            '404': 'unknown cluster or topic',
            '409': 'another audit of the topic saved its checkpoint first',
          }),
        },
      },
    },
    '/v3/clusters/{cluster_id}/approvals': {
      get: {
        operationId: 'listApprovals',
        summary: 'What workflows wait for',
        tags: ['workflows'],
        security: admin,
        parameters: [clusterId],
        responses: {
          '200': ok('pending approvals', ref('Approvals')),
          ...clusterRouteErrors,
        },
      },
    },
    '/v3/clusters/{cluster_id}/approvals/{token}': {
      post: {
        operationId: 'decideApproval',
        summary: 'Approve or reject a waiting workflow (decided once)',
        tags: ['workflows'],
        security: admin,
        parameters: [
          clusterId,
          path('token', { type: 'string', pattern: '^[A-Za-z0-9_-]{16,64}$' }),
        ],
        requestBody: { required: true, content: json(ref('Decision')) },
        responses: {
          '200': ok('the decision', ref('Decided')),
          ...errors({
            '400': 'not a token, or not {decision, by?, reason?}',
            '404': 'unknown cluster or token',
            '409': 'the token was decided otherwise already',
          }),
        },
      },
    },
  },
  components: {
    schemas,
    securitySchemes: {
      tallyJwt: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          "API Gateway's JWT authorizer (scopes tally/<scope>, tally/admin includes all), when deployed with TALLY_API_AUTH=jwt; locally a bearer token from TALLY_AUTH_TOKENS.",
      },
      tallyIam: {
        type: 'apiKey',
        name: 'Authorization',
        in: 'header',
        'x-amazon-apigateway-authtype': 'awsSigv4',
        description:
          'AWS_IAM authorization, the deployed default: a SigV4-signed request whose IAM policy allows execute-api:Invoke on the route (docs/deploy.md).',
      },
    },
  },
};
