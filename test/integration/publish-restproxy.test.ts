import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { resolveKafkaJars } from '../../infra/local/kafka-jars.js';
import {
  createTopic,
  produceEvent,
  readBack,
  reportLines,
  totalRecords,
} from '../helpers/publish-client.js';
import { usePublishApi } from '../helpers/publish-env.js';

const run = promisify(execFile);

// Where Tally answers as Confluent REST Proxy answers (issue 20), through the handlers, against the
// real broker: each case names the peer's source that says what REST Proxy does
// (github.com/confluentinc/kafka-rest, kafka-rest/src/...). docs/api.md lists what still differs.
const PEER = {
  noSchemaIT:
    'test/java/io/confluent/kafkarest/integration/v3/ProduceActionNoSchemaIntegrationTest.java',
  produceAction: 'main/java/io/confluent/kafkarest/resources/v3/ProduceAction.java',
  batchAction: 'main/java/io/confluent/kafkarest/resources/v3/ProduceBatchAction.java',
  batchActionTest: 'test/java/io/confluent/kafkarest/resources/v3/ProduceBatchActionTest.java',
  streaming: 'main/java/io/confluent/kafkarest/response/StreamingResponse.java',
  actionTest: 'test/java/io/confluent/kafkarest/resources/v3/ProduceActionTest.java',
  controller: 'main/java/io/confluent/kafkarest/controllers/ProduceControllerImpl.java',
};

describe('REST Proxy v3 produce: Content-Type and charset', () => {
  const ctx = usePublishApi('tally-test-restproxy-ct');
  let topic: string;
  beforeAll(async () => {
    topic = await createTopic(ctx.admin, 1);
  });

  const record = { value: { type: 'STRING', data: 'x' } };
  const cases: Array<{ contentType: string; status: number; peer: string }> = [
    // @Consumes(MediaType.APPLICATION_JSON): Jersey refuses any other media type.
    { contentType: 'text/plain', status: 415, peer: PEER.produceAction },
    { contentType: 'application/x-www-form-urlencoded', status: 415, peer: PEER.produceAction },
    { contentType: 'application/json; charset=UTF-8', status: 200, peer: PEER.noSchemaIT },
    { contentType: 'application/json; charset=ISO-8859-1', status: 200, peer: PEER.noSchemaIT },
    { contentType: 'application/json; charset=DEADBEEF', status: 400, peer: PEER.noSchemaIT },
  ];

  it.each(cases)('$contentType → $status ($peer)', async ({ contentType, status }) => {
    const before = await totalRecords(ctx.admin, topic);
    for (const produce of [ctx.api.produce, ctx.api.batch]) {
      const body = produce === ctx.api.batch ? { entries: [{ id: 'a', ...record }] } : record;
      const response = await produce(produceEvent(topic, body, { 'content-type': contentType }));
      const expected = produce === ctx.api.batch && status === 200 ? 207 : status;
      expect(response.statusCode, response.body).toBe(expected);
      if (status >= 400) expect(JSON.parse(response.body).field).toBe('Content-Type');
    }
    const written = status === 200 ? 2 : 0;
    expect(await totalRecords(ctx.admin, topic)).toBe(before + written);
  });

  it('reads an ISO-8859-1 body as ISO-8859-1 (é is one byte there)', async () => {
    const latin1 = Buffer.from('{"value": {"type": "STRING", "data": "caf\u00e9"}}', 'latin1');
    const own = await createTopic(ctx.admin, 1);
    const event = produceEvent(own, latin1.toString('base64'), {
      'content-type': 'application/json; charset=ISO-8859-1',
    });
    const response = await ctx.api.produce({ ...event, isBase64Encoded: true });
    expect(reportLines(response)[0]).toMatchObject({ error_code: 200, value: { size: 5 } });
    const [written] = await readBack(own, 1);
    expect(written?.value?.toString('utf8')).toBe('caf\u00e9');
  });
});

describe('REST Proxy v3 produce: a record it cannot produce is its entry, not the request', () => {
  const ctx = usePublishApi('tally-test-restproxy-records');

  const good = (data: string) => ({ value: { type: 'STRING', data } });
  // Each: a record, the error_code of its entry, a field its message names, and the peer's word.
  const bad: Array<{ record: unknown; code: number; field: string; peer: string }> = [
    // ProduceActionNoSchemaIntegrationTest.produceBinaryWithInvalidData_throwsBadRequest: 200, 400.
    {
      record: { value: { type: 'BINARY', data: 'fooba' } },
      code: 400,
      field: 'value.data',
      peer: PEER.noSchemaIT,
    },
    // produceWithInvalidData_throwsBadRequest: an unknown field is the record's 400.
    {
      record: { records: { subject: 'foobar' } },
      code: 400,
      field: 'records',
      peer: PEER.noSchemaIT,
    },
    // ProduceBatchAction: partitionId < 0 → Errors.partitionNotFoundException() (40402).
    {
      record: { partition_id: -1, ...good('p') },
      code: 40402,
      field: 'partition_id',
      peer: PEER.batchAction,
    },
    {
      record: { partition_id: 5, ...good('p') },
      code: 40402,
      field: 'partition_id',
      peer: PEER.batchActionTest,
    },
    // ProduceActionTest.produceNoSchemaRegistryDefined: 422, "Error: 42206 : Payload error. …".
    {
      record: { value: { type: 'AVRO', schema: '{"type": "string"}', data: 'x' } },
      code: 422,
      field: 'Error: 42206 : Payload error.',
      peer: PEER.actionTest,
    },
    {
      record: { key: { schema_id: 1, data: 'k' }, ...good('v') },
      code: 422,
      field: 'key',
      peer: PEER.actionTest,
    },
  ];

  it.each(bad)(
    'a lone bad record → 200, its entry $code ($peer)',
    async ({ record, code, field }) => {
      const topic = await createTopic(ctx.admin, 2);
      const response = await ctx.api.produce(produceEvent(topic, record));
      expect(response.statusCode, response.body).toBe(200);
      const [entry] = reportLines(response);
      expect(entry).toMatchObject({ error_code: code, outcome: 'REJECTED' });
      expect(String(entry?.message)).toContain(field);
      expect(await totalRecords(ctx.admin, topic)).toBe(0);
    },
  );

  // StreamingResponse.java: each record's result or error is written in turn; the next goes on.
  it('streams every bad record in its place, sends the others, and spends no seq on the bad ones', async () => {
    const topic = await createTopic(ctx.admin, 2);
    const stream = [good('a'), ...bad.map((b) => b.record), good('b')];
    const response = await ctx.api.produce(
      produceEvent(topic, stream.map((r) => JSON.stringify(r)).join('\n')),
    );
    expect(response.statusCode).toBe(200);
    const entries = reportLines(response);
    expect(entries.map((e) => e.error_code)).toEqual([200, ...bad.map((b) => b.code), 200]);
    expect(entries[0]).toMatchObject({ seq: 1 });
    expect(entries.at(-1)).toMatchObject({ seq: 2 });
    const written = await readBack(topic, 2);
    expect(written.map((r) => r.value?.toString()).sort()).toEqual(['a', 'b']);
  });

  it('answers the same in a batch: 207, the bad entries under failures by id', async () => {
    const topic = await createTopic(ctx.admin, 2);
    const entries = [good('a'), ...bad.map((b) => b.record), good('b')].map((r, i) => ({
      id: `e${i}`,
      ...(r as object),
    }));
    const response = await ctx.api.batch(produceEvent(topic, { entries }));
    expect(response.statusCode).toBe(207);
    const body = JSON.parse(response.body) as {
      successes: Array<{ id: string; seq: number }>;
      failures: Array<{ id: string; error_code: number }>;
    };
    expect(body.successes.map((e) => [e.id, e.seq])).toEqual([
      ['e0', 1],
      [`e${bad.length + 1}`, 2],
    ]);
    expect(body.failures.map((e) => e.error_code)).toEqual(bad.map((b) => b.code));
  });
});

describe('REST Proxy v3 batch produce: a batch that cannot be produced as a whole', () => {
  const ctx = usePublishApi('tally-test-restproxy-batch');
  const entry = (id: unknown) => ({ id, value: { type: 'STRING', data: 'x' } });
  // ProduceBatchActionTest.java: each is a RestConstraintViolationException, status 422, 42208.
  const cases: Array<{ name: string; body: unknown; field: string }> = [
    { name: 'no body (testProduceBatchNullRequest)', body: '', field: 'body' },
    { name: 'null (testProduceBatchNullRequest)', body: 'null', field: 'body' },
    { name: 'empty batch (testProduceBatchEmptyRequest)', body: { entries: [] }, field: 'entries' },
    {
      name: 'ids not distinct (testProduceBatchWithDuplicateId)',
      body: { entries: [entry('0'), entry('0')] },
      field: 'entries[1].id',
    },
    {
      name: 'null id (testProduceBatchNullIdFailure)',
      body: { entries: [entry(null)] },
      field: 'entries[0].id',
    },
    {
      name: 'integer id (testProduceBatchIntegerIdFailure)',
      body: { entries: [entry(0)] },
      field: 'entries[0].id',
    },
    {
      name: 'empty id (testProduceBatchEmptyStringIdFailure)',
      body: { entries: [entry('')] },
      field: 'entries[0].id',
    },
    {
      name: '81-character id (testProduceBatchLongStringIdFailure)',
      body: { entries: [entry('0'.repeat(81))] },
      field: 'entries[0].id',
    },
    {
      name: 'id of other characters (testProduceBatchInvalidStringIdFailure)',
      body: { entries: [entry('€#£')] },
      field: 'entries[0].id',
    },
  ];

  it.each(cases)('$name → 422, error_code 42208, nothing written', async ({ body, field }) => {
    const topic = await createTopic(ctx.admin, 1);
    const response = await ctx.api.batch(produceEvent(topic, body));
    expect(response.statusCode, response.body).toBe(422);
    expect(JSON.parse(response.body)).toMatchObject({ error_code: 42208, field });
    expect(await totalRecords(ctx.admin, topic)).toBe(0);
  });

  // ProduceBatchRequest requires `entries`: REST Proxy reads a body without it as an empty batch.
  it('a body without entries → 422, 42208 "Empty batch.", nothing written', async () => {
    const topic = await createTopic(ctx.admin, 1);
    const response = await ctx.api.batch(produceEvent(topic, {}));
    expect(response.statusCode, response.body).toBe(422);
    expect(JSON.parse(response.body)).toMatchObject({ error_code: 42208, field: 'entries' });
    expect(JSON.parse(response.body).message).toContain('Empty batch.');
  });

  // A field the batch request does not have is a body REST Proxy cannot map: 422, not 400.
  it('an unknown top-level field → 422 naming it, nothing written', async () => {
    const topic = await createTopic(ctx.admin, 1);
    const response = await ctx.api.batch(
      produceEvent(topic, { entries: [entry('a')], records: [] }),
    );
    expect(response.statusCode, response.body).toBe(422);
    expect(JSON.parse(response.body)).toMatchObject({ error_code: 422, field: 'records' });
    expect(await totalRecords(ctx.admin, topic)).toBe(0);
  });

  // A header value is padded base64 in REST Proxy's request: without its padding, the entry's 400.
  it('a header value that is not padded base64 → 400 in its entry; the others are written', async () => {
    const topic = await createTopic(ctx.admin, 1);
    const response = await ctx.api.batch(
      produceEvent(topic, {
        entries: [entry('ok'), { ...entry('unpadded'), headers: [{ name: 'h', value: 'AA' }] }],
      }),
    );
    expect(response.statusCode, response.body).toBe(207);
    const body = JSON.parse(response.body);
    expect(body.successes.map((e: { id: string }) => e.id)).toEqual(['ok']);
    expect(body.failures).toEqual([expect.objectContaining({ id: 'unpadded', error_code: 400 })]);
    expect(body.failures[0].message).toContain('entries[1].headers[0].value');
    expect(await totalRecords(ctx.admin, topic)).toBe(1);
  });
});

// ProduceControllerImpl.java: each header becomes new RecordHeader(name, value.orElse(null)).
describe(`REST Proxy v3 produce: a header without a value is a Kafka null header (${PEER.controller})`, () => {
  const ctx = usePublishApi('tally-test-restproxy-headers');

  it('writes null header values that a plain kafkajs consumer reads back as null', async () => {
    const topic = await createTopic(ctx.admin, 1);
    const headers = [
      { name: 'null', value: null },
      { name: 'absent' },
      { name: 'empty', value: '' },
      { name: 'both', value: 'YQ==' },
      { name: 'both', value: null },
    ];
    const record = { value: { type: 'STRING', data: 'v' }, headers };
    const streamed = await ctx.api.produce(produceEvent(topic, record));
    expect(reportLines(streamed)[0]).toMatchObject({ error_code: 200 });
    const batched = await ctx.api.batch(produceEvent(topic, { entries: [{ id: 'a', ...record }] }));
    expect(JSON.parse(batched.body).successes).toHaveLength(1);
    const written = await readBack(topic, 2);
    for (const message of written) {
      expect(message.headers?.null).toBeNull();
      expect(message.headers?.absent).toBeNull();
      expect(message.headers?.empty).toEqual(Buffer.alloc(0));
      expect(message.headers?.both).toEqual([Buffer.from('a'), null]);
      expect(message.headers?.['tally.seq']).toBeDefined();
    }
  });

  // Kafka's own Java consumer, the client REST Proxy users read with (test/fixtures/NullHeaderReader.java).
  it('writes null header values that Kafka’s Java consumer reads as null', async () => {
    const topic = await createTopic(ctx.admin, 1);
    const headers = [
      { name: 'n', value: null },
      { name: 'e', value: '' },
      { name: 'v', value: 'eA==' },
    ];
    const response = await ctx.api.produce(
      produceEvent(topic, { value: { type: 'STRING', data: 'v' }, headers }),
    );
    expect(reportLines(response)[0]).toMatchObject({ error_code: 200 });
    const { classpath } = await resolveKafkaJars();
    const { stdout } = await run(
      'java',
      ['-cp', classpath, 'test/fixtures/NullHeaderReader.java', inject('kafkaBrokers'), topic],
      { timeout: 60_000 },
    );
    expect(stdout.split('\n').filter((line) => /^[nev]=/.test(line))).toEqual([
      'n=null',
      "e=''",
      "v='x'",
    ]);
  });

  it('keeps an Idempotency-Key retry of a null header the same request, and "" another', async () => {
    const topic = await createTopic(ctx.admin, 1);
    const withValue = (value: string | null) => ({
      value: { type: 'STRING', data: 'v' },
      headers: [{ name: 'h', value }],
    });
    const key = { 'idempotency-key': `null-header-${topic}` };
    const first = await ctx.api.produce(produceEvent(topic, withValue(null), key));
    const again = await ctx.api.produce(produceEvent(topic, withValue(null), key));
    expect(reportLines(again)[0]).toMatchObject({ seq: reportLines(first)[0]?.seq });
    const other = await ctx.api.produce(produceEvent(topic, withValue(''), key));
    expect(other.statusCode).toBe(422);
    expect(await totalRecords(ctx.admin, topic)).toBe(1);
  });
});

// strimzi-kafka-bridge 0.30.0 (#915): a v2 record's `timestamp`, epoch milliseconds.
describe('v2 produce: a record timestamp as the Strimzi bridge takes it', () => {
  const ctx = usePublishApi('tally-test-restproxy-v2');

  const v2 = (topic: string, records: unknown[]) => {
    const event = produceEvent(
      topic,
      { records },
      { 'content-type': 'application/vnd.kafka.json.v2+json' },
    );
    return ctx.api.v2({ ...event, pathParameters: { topic_name: topic } });
  };

  it('writes the given timestamp', async () => {
    const topic = await createTopic(ctx.admin, 1);
    const at = Date.UTC(2026, 10, 29, 10);
    const response = await v2(topic, [{ value: { n: 1 }, timestamp: at }]);
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body).offsets[0]).toMatchObject({ partition: 0, offset: 0 });
    const [written] = await readBack(topic, 1);
    expect(written?.timestamp).toBe(String(at));
  });

  // The bridge's openapi.json, POST /topics/{topicname}: 422 "The record is not valid."
  it('refuses the whole request with 422 for a record that is not valid: nothing sent', async () => {
    const topic = await createTopic(ctx.admin, 1);
    const response = await v2(topic, [{ value: 1 }, { value: 2, timestamp: 'soon' }]);
    expect(response.statusCode).toBe(422);
    expect(JSON.parse(response.body)).toMatchObject({ field: 'records[1].timestamp' });
    expect(await totalRecords(ctx.admin, topic)).toBe(0);
  });
});
