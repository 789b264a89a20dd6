import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { MSKEvent } from 'aws-lambda';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ReceiptBatch } from '../../functions/core/receipts/msk-receipts.js';
import { auditTopicNow } from '../helpers/audit-topic.js';
import { lambdaContext } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import { mskRecord } from '../helpers/msk-event.js';
import {
  createTopic,
  loadHandlers,
  produceEvent,
  type ReadRecord,
  readBack,
  reportLines,
} from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import {
  registryCall,
  startTestSchemaRegistry,
  type TestSchemaRegistry,
} from '../helpers/schema-registry.js';
import { uniqueName } from '../helpers/unique-name.js';

// Schema-based produce through the v3 routes, against the real broker and a real registry (the
// local stack's Apicurio Registry, Confluent API). What REST Proxy does, and where it says so
// (github.com/confluentinc/kafka-rest, kafka-rest/src/main/java/io/confluent/kafkarest/):
// - controllers/SchemaManagerImpl.java getSchema: a schema by `schema_id`; else `schema_version`
//   of a subject; else an inline `schema` (its `type` required); else the subject's latest. The
//   subject is `subject`, else the one `subject_name_strategy` names (TopicNameStrategy when
//   neither is given). A field that does not go with the others is 400 ("Unsupported argument").
// - controllers/SchemaRecordSerializerImpl.java: data its schema refuses is a BadRequestException
//   (error_code 400), reported in the record's entry of the stream (resources/v3/ProduceAction.java).
// - Errors.java messageSerializationException: an id or subject the registry does not have is 42207.
// Tally's extension: no seq is spent on a record that is not sent, so seqs stay dense.
// Every value read back is decoded by @kafkajs/confluent-schema-registry, which shares no code
// with Tally's serializer.

const group = uniqueName('schema-downstream');
const ns = `tally.schema${Date.now().toString(36)}`;
const ORDER_AVRO = JSON.stringify({
  type: 'record',
  name: 'Order',
  namespace: ns,
  fields: [
    { name: 'id', type: 'string' },
    { name: 'quantity', type: 'int' },
  ],
});
const ORDER_PROTO = `syntax = "proto3";\npackage ${ns};\nmessage Order {\n  string id = 1;\n  int32 quantity = 2;\n}\n`;
const ORDER_JSON = JSON.stringify({
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'Order',
  type: 'object',
  properties: { id: { type: 'string' }, quantity: { type: 'integer' } },
  required: ['id', 'quantity'],
  additionalProperties: false,
});

let registry: TestSchemaRegistry;
let registryStopped = false;
let api: Awaited<ReturnType<typeof loadHandlers>>;
const admin: Admin = testKafka('tally-test-publish-schema').admin();
let decoder: SchemaRegistry;

beforeAll(async () => {
  registry = await startTestSchemaRegistry();
  await usePublishEnv({ TALLY_SCHEMA_REGISTRY_URL: registry.url, TALLY_RECEIPTS_GROUP: group });
  await admin.connect();
  api = await loadHandlers();
  decoder = new SchemaRegistry({ host: registry.url });
});
afterAll(async () => {
  await admin.disconnect();
  if (!registryStopped) await registry?.stop();
});

async function register(subject: string, schema: string, schemaType?: string): Promise<number> {
  const answer = await registryCall(registry.url, 'POST', `/subjects/${subject}/versions`, {
    schema,
    ...(schemaType && { schemaType }),
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return (answer.body as { id: number }).id;
}

function produce(topic: string, records: unknown[], headers: Record<string, string> = {}) {
  const body = records.map((r) => JSON.stringify(r)).join('\n');
  return api.produce(produceEvent(topic, body, headers));
}

/** Each value read back, decoded by the independent decoder, with its tally.seq, by seq. */
async function decodedBySeq(topic: string, count: number) {
  const read = await readBack(topic, count);
  const decoded = await Promise.all(
    read.map(async (r: ReadRecord) => ({
      seq: Number(r.headers?.['tally.seq']?.toString()),
      key: r.key === null ? null : await decoder.decode(r.key),
      value: r.value === null ? null : await decoder.decode(r.value),
    })),
  );
  return decoded.sort((a, b) => a.seq - b.seq);
}

/** Protobuf decodes to a message object; Avro to a record; both compared as plain JSON. */
const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

describe('v3 produce with schemas (Avro, Protobuf, JSON Schema) against a real registry', () => {
  it('serializes Avro by schema_id, subject+version, subject latest, the topic strategy and inline', async () => {
    const topic = await createTopic(admin, 1);
    const id = await register(`${topic}-value`, ORDER_AVRO);
    const other = `${uniqueName('orders')}-avro`;
    await register(other, ORDER_AVRO);
    const inlineSchema = ORDER_AVRO.replace('"Order"', '"InlineOrder"');
    const response = await produce(topic, [
      { value: { schema_id: id, data: { id: 'a1', quantity: 1 } } },
      { value: { subject: other, schema_version: 1, data: { id: 'a2', quantity: 2 } } },
      { value: { subject: other, data: { id: 'a3', quantity: 3 } } },
      { value: { data: { id: 'a4', quantity: 4 } } },
      { value: { subject_name_strategy: 'TOPIC_NAME', data: { id: 'a5', quantity: 5 } } },
      {
        value: {
          type: 'AVRO',
          schema: inlineSchema,
          subject_name_strategy: 'RECORD_NAME',
          data: { id: 'a6', quantity: 6 },
        },
      },
    ]);
    expect(response.statusCode, response.body).toBe(200);
    const lines = reportLines(response);
    expect(lines.map((l) => l.error_code)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(lines.map((l) => l.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    // Each value's report names its subject, id and version there, as REST Proxy's does.
    expect(lines[0]?.value).toEqual({
      type: 'AVRO',
      subject: `${topic}-value`,
      schema_id: id,
      schema_version: 1,
      size: expect.any(Number),
    });
    expect(lines[1]).toMatchObject({ value: { subject: other, schema_id: id, schema_version: 1 } });
    expect(lines[2]).toMatchObject({ value: { subject: other, schema_version: 1 } });
    expect(lines[3]).toMatchObject({ value: { subject: `${topic}-value`, schema_version: 1 } });
    // The inline schema was registered under its record name (RecordNameStrategy).
    const inline = await registryCall(
      registry.url,
      'GET',
      `/subjects/${ns}.InlineOrder/versions/latest`,
    );
    expect(inline.status).toBe(200);
    expect(lines[5]).toMatchObject({
      value: {
        subject: `${ns}.InlineOrder`,
        schema_id: (inline.body as { id: number }).id,
        schema_version: 1,
      },
    });

    const read = await decodedBySeq(topic, 6);
    expect(read.map((r) => plain(r.value))).toEqual(
      [1, 2, 3, 4, 5, 6].map((n) => ({ id: `a${n}`, quantity: n })),
    );
  });

  it('serializes Protobuf and JSON Schema, key and value both schema-typed', async () => {
    const topic = await createTopic(admin, 2);
    const protoId = await register(`${topic}-value`, ORDER_PROTO, 'PROTOBUF');
    const keySchema = JSON.stringify({ type: 'string' });
    const response = await produce(topic, [
      {
        key: { type: 'AVRO', schema: keySchema, data: 'k-1' },
        value: { schema_id: protoId, data: { id: 'p1', quantity: 7 } },
      },
      {
        key: { type: 'AVRO', schema: keySchema, data: 'k-2' },
        value: {
          type: 'PROTOBUF',
          schema: ORDER_PROTO,
          subject_name_strategy: 'TOPIC_RECORD_NAME',
          data: { id: 'p2', quantity: 8 },
        },
      },
      {
        key: {
          type: 'JSONSCHEMA',
          // $schema: a bare {"type": "string"} would be Avro to Apicurio's type detection.
          schema: JSON.stringify({
            $schema: 'http://json-schema.org/draft-07/schema#',
            type: 'string',
          }),
          subject: `${topic}-json-key`,
          data: 'k-3',
        },
        value: {
          type: 'JSONSCHEMA',
          schema: ORDER_JSON,
          subject: `${topic}-json`,
          data: { id: 'j1', quantity: 9 },
        },
      },
      {
        key: { subject: `${topic}-key`, data: 'k-4' },
        value: { subject: `${topic}-json`, data: { id: 'j2', quantity: 10 } },
      },
    ]);
    expect(response.statusCode, response.body).toBe(200);
    const lines = reportLines(response);
    expect(
      lines.map((l) => l.error_code),
      response.body,
    ).toEqual([200, 200, 200, 200]);
    expect(lines[0]).toMatchObject({
      key: { type: 'AVRO' },
      value: { type: 'PROTOBUF', schema_id: protoId },
    });
    expect(lines[2]).toMatchObject({ key: { type: 'JSONSCHEMA' }, value: { type: 'JSONSCHEMA' } });
    // The keys' Avro schema went to the topic's key subject (TopicNameStrategy, the default).
    expect(
      (await registryCall(registry.url, 'GET', `/subjects/${topic}-key/versions`)).body,
    ).toEqual([1]);
    expect(
      (await registryCall(registry.url, 'GET', `/subjects/${topic}-${ns}.Order/versions`)).body,
    ).toEqual([1]);

    const read = await decodedBySeq(topic, 4);
    expect(read.map((r) => r.key)).toEqual(['k-1', 'k-2', 'k-3', 'k-4']);
    expect(read.map((r) => plain(r.value))).toEqual([
      { id: 'p1', quantity: 7 },
      { id: 'p2', quantity: 8 },
      { id: 'j1', quantity: 9 },
      { id: 'j2', quantity: 10 },
    ]);
  });

  it('reports a record its schema refuses in its own entry (400), sends the others, spends no seq on it', async () => {
    const topic = await createTopic(admin, 1);
    const id = await register(`${topic}-value`, ORDER_AVRO);
    const order = (n: number) => ({ value: { schema_id: id, data: { id: `o${n}`, quantity: n } } });
    const response = await produce(topic, [
      order(1),
      order(2),
      { value: { schema_id: id, data: { id: 'o3', quantity: 'three' } } },
      order(4),
      { value: { schema_id: 987_654, data: { id: 'o5', quantity: 5 } } },
      order(6),
    ]);
    expect(response.statusCode, response.body).toBe(200);
    const lines = reportLines(response);
    expect(lines.map((l) => l.error_code)).toEqual([200, 200, 400, 200, 42207, 200]);
    expect(lines[2]).toMatchObject({ outcome: 'REJECTED', retriable: false });
    expect(lines[2]?.message).toMatch(/^value\.data\.quantity/);
    expect(lines[4]?.message).toMatch(/^value\.schema_id/);
    // Written records' seqs are dense: nothing was allocated for the two refused.
    expect(lines.filter((l) => l.error_code === 200).map((l) => l.seq)).toEqual([1, 2, 3, 4]);
    const read = await decodedBySeq(topic, 4);
    expect(read.map((r) => plain(r.value))).toEqual(
      [1, 2, 4, 6].map((n) => ({ id: `o${n}`, quantity: n })),
    );

    // The receipts middleware (the example downstream function) and the audit read only the
    // tally.* headers: the schema-encoded records are receipted, none lost, none duplicated.
    const records = (await readBack(topic, 4)).map((r) => mskRecord(topic, r));
    const event: MSKEvent = {
      eventSource: 'aws:kafka',
      eventSourceArn: 'arn:aws:kafka:eu-west-1:123456789012:cluster/local/1',
      bootstrapServers: inject('kafkaBrokers'),
      records: { [`${topic}-0`]: records },
    };
    const { handler: downstream } = await import('../../functions/downstream-example/handler.js');
    expect(await downstream(event, lambdaContext())).toEqual({ batchItemFailures: [] });
    const findings = await auditTopicNow(topic);
    expect(findings).toMatchObject({
      produced: 4,
      inLog: 4,
      lost: [],
      producerDuplicates: [],
      consumerDuplicates: [],
    });
    const { receiptsRuntime } = await import('../../functions/receipts/runtime.js');
    const receipts: ReceiptBatch[] = [];
    await (await receiptsRuntime()).store.forEachBatch(group, topic, (b) => receipts.push(b));
    expect(receipts).toEqual([
      { group, stream: topic, topic, offsets: [[0, 0, 3]], count: 4, seqs: [[1, 4]] },
    ]);
  });

  it('refuses a schema_id not registered under its subject (42207, as REST Proxy checks), and takes it under the subject named', async () => {
    const topic = await createTopic(admin, 1);
    const own = await register(`${topic}-value`, ORDER_AVRO);
    const elsewhere = `${uniqueName('orders')}-elsewhere`;
    const foreign = await register(elsewhere, ORDER_AVRO.replace('"Order"', '"ForeignOrder"'));
    const response = await produce(topic, [
      { value: { schema_id: foreign, data: { id: 'f1', quantity: 1 } } },
      { value: { schema_id: foreign, subject: elsewhere, data: { id: 'f2', quantity: 2 } } },
      { value: { schema_id: own, data: { id: 'f3', quantity: 3 } } },
      { value: { schema_id: own, subject: elsewhere, data: { id: 'f4', quantity: 4 } } },
    ]);
    expect(response.statusCode, response.body).toBe(200);
    const lines = reportLines(response);
    expect(lines.map((l) => l.error_code)).toEqual([42207, 200, 200, 42207]);
    expect(lines[0]).toMatchObject({ outcome: 'REJECTED', retriable: false });
    expect(lines[0]?.message).toContain(
      `value.schema_id: schema ${foreign} is not registered under subject ${topic}-value`,
    );
    expect(lines[3]?.message).toContain(`not registered under subject ${elsewhere}`);
    expect(lines.filter((l) => l.error_code === 200).map((l) => l.seq)).toEqual([1, 2]);
    const read = await decodedBySeq(topic, 2);
    expect(read.map((r) => plain(r.value))).toEqual([
      { id: 'f2', quantity: 2 },
      { id: 'f3', quantity: 3 },
    ]);
  });

  it("applies the topic's max.message.bytes to the encoded bytes", async () => {
    const topic = await createTopic(admin, 1, { 'max.message.bytes': '4096' });
    const id = await register(`${topic}-value`, ORDER_AVRO);
    // The size judged and reported is the wire format's: 5 header bytes + Avro's (a 2-byte length,
    // the string, a 1-byte int). 5,000 characters are over the topic's limit: 413, no seq.
    const order = (n: number) => ({
      value: { schema_id: id, data: { id: 'x'.repeat(n), quantity: 1 } },
    });
    const lines = reportLines(await produce(topic, [order(3000), order(5000), order(3000)]));
    expect(lines.map((l) => l.error_code)).toEqual([200, 413, 200]);
    expect(lines.map((l) => l.seq)).toEqual([1, undefined, 2]);
    expect(lines[0]).toMatchObject({ value: { type: 'AVRO', size: 5 + 2 + 3000 + 1 } });
  });

  it('batch produce: schema entries written, a refused one among the failures, seqs dense', async () => {
    const topic = await createTopic(admin, 1);
    await register(`${topic}-value`, ORDER_JSON, 'JSON');
    const response = await api.batch(
      produceEvent(topic, {
        entries: [
          { id: 'e1', value: { data: { id: 'b1', quantity: 1 } } },
          { id: 'e2', value: { data: { id: 'b2', quantity: 2, extra: true } } },
          { id: 'e3', value: { schema_version: 1, data: { id: 'b3', quantity: 3 } } },
          { id: 'e4', value: { type: 'AVRO', data: { id: 'b4' } } },
        ],
      }),
    );
    expect(response.statusCode, response.body).toBe(207);
    const { successes, failures } = JSON.parse(response.body) as {
      successes: Array<{ id: string; seq: number }>;
      failures: Array<{ id: string; error_code: number; message: string }>;
    };
    expect(successes.map((s) => [s.id, s.seq])).toEqual([
      ['e1', 1],
      ['e3', 2],
    ]);
    expect(failures.map((f) => [f.id, f.error_code])).toEqual([
      ['e2', 400],
      ['e4', 400],
    ]);
    expect(failures[0]?.message).toMatch(/^entries\[1\]\.value\.data/);
    // A type without a schema is REST Proxy's "Unsupported argument" (400), named here.
    expect(failures[1]?.message).toMatch(/^entries\[3\]\.value\.schema:/);
    const read = await decodedBySeq(topic, 2);
    expect(read.map((r) => r.value)).toEqual([
      { id: 'b1', quantity: 1 },
      { id: 'b3', quantity: 3 },
    ]);
  });

  it('answers 503 (retriable, nothing sent, no seq) for a schema the registry cannot be asked for', async () => {
    const topic = await createTopic(admin, 1);
    const id = await register(`${topic}-value`, ORDER_AVRO);
    const cached = { value: { schema_id: id, data: { id: 'c1', quantity: 1 } } };
    expect(reportLines(await produce(topic, [cached]))[0]).toMatchObject({ seq: 1 });
    await registry.stop();
    registryStopped = true;

    // A schema the container has cached needs no registry; one it has not is a 503 entry.
    const lone = await produce(topic, [{ value: { subject: 'unseen', data: { id: 'x' } } }]);
    expect(lone.statusCode).toBe(503);
    expect(lone.headers['retry-after']).toBe('1');
    expect(reportLines(lone)[0]).toMatchObject({ error_code: 503, retriable: true });
    const mixed = reportLines(
      await produce(topic, [{ value: { subject: 'unseen', data: { id: 'x' } } }, cached]),
    );
    expect(mixed.map((l) => l.error_code)).toEqual([503, 200]);
    expect(mixed[1]?.seq).toBe(2);
    // With an Idempotency-Key the request fails whole: the key's seqs are for all its records.
    const keyed = await produce(
      topic,
      [cached, { value: { subject: 'unseen', data: { id: 'x' } } }],
      { 'idempotency-key': uniqueName('key') },
    );
    expect(keyed.statusCode).toBe(503);
    expect(reportLines(await produce(topic, [cached]))[0]).toMatchObject({ seq: 3 });
  });
});
