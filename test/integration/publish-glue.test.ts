import { CreateSchemaCommand, GlueClient } from '@aws-sdk/client-glue';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GlueStandIn, serveGlueStandIn } from '../../infra/local/glue-stand-in.js';
import { ORDER_AVRO, ORDER_JSON, ORDER_PROTO } from '../fixtures/glue-order-schemas.js';
import { decodeGlueValue, type GlueFormat, readGlueHeader } from '../helpers/glue-decoder.js';
import { testKafka } from '../helpers/kafka.js';
import {
  createTopic,
  loadHandlers,
  produceEvent,
  readBack,
  reportLines,
  totalRecords,
} from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { uniqueName } from '../helpers/unique-name.js';

// Schema-based produce with AWS Glue Schema Registry selected (TALLY_SCHEMA_REGISTRY=glue): the
// v3 produce route, the real broker, and the local stand-in for Glue's API that the real
// @aws-sdk/client-glue talks to. Every value read back is decoded by the test's own reader of
// Glue's header and @aws-lambda-powertools/kafka's decoders, sharing no code with Tally's.

const REGISTRY = uniqueName('glue-registry');
let glue: GlueStandIn;
let glueAdmin: GlueClient;
let api: Awaited<ReturnType<typeof loadHandlers>>;
const admin: Admin = testKafka('tally-test-publish-glue').admin();

beforeAll(async () => {
  glue = await serveGlueStandIn({ registries: [REGISTRY] });
  glueAdmin = new GlueClient({
    region: glue.region,
    endpoint: glue.url,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await usePublishEnv({
    TALLY_SCHEMA_REGISTRY: 'glue',
    TALLY_GLUE_REGISTRY_NAME: REGISTRY,
    TALLY_GLUE_ENDPOINT: glue.url,
  });
  await admin.connect();
  api = await loadHandlers();
});
afterAll(async () => {
  await admin.disconnect();
  glueAdmin?.destroy();
  await glue?.close();
});

async function createSchema(name: string, format: GlueFormat, definition: string) {
  const created = await glueAdmin.send(
    new CreateSchemaCommand({
      RegistryId: { RegistryName: REGISTRY },
      SchemaName: name,
      DataFormat: format,
      SchemaDefinition: definition,
    }),
  );
  return created.SchemaVersionId as string;
}

function produce(topic: string, records: unknown[]) {
  return api.produce(produceEvent(topic, records.map((r) => JSON.stringify(r)).join('\n')));
}

/** Each value read back, its Glue header and Powertools' decoding, by tally.seq. */
async function readDecoded(topic: string, count: number, format: GlueFormat, schema: string) {
  const read = await readBack(topic, count);
  const decoded = await Promise.all(
    read.map(async (r) => ({
      seq: Number(r.headers?.['tally.seq']?.toString()),
      header: readGlueHeader(r.value as Buffer),
      value: await decodeGlueValue(r.value as Buffer, format, schema),
    })),
  );
  return decoded.sort((a, b) => a.seq - b.seq);
}

describe('v3 produce with AWS Glue Schema Registry (against the Glue stand-in)', () => {
  it('serializes Avro by schema_version, the latest, schema_id (a version UUID) and inline, in Glue’s wire format', async () => {
    const topic = await createTopic(admin, 1);
    const name = `${topic}-orders`;
    const id = await createSchema(name, 'AVRO', ORDER_AVRO);
    const response = await produce(topic, [
      { value: { subject: name, schema_version: 1, data: { id: 'a1', quantity: 1 } } },
      { value: { subject: name, data: { id: 'a2', quantity: 2 } } },
      { value: { schema_id: id, data: { id: 'a3', quantity: 3 } } },
      {
        value: { type: 'AVRO', schema: ORDER_AVRO, subject: name, data: { id: 'a4', quantity: 4 } },
      },
    ]);
    expect(response.statusCode, response.body).toBe(200);
    const lines = reportLines(response);
    expect(lines.map((l) => l.error_code)).toEqual([200, 200, 200, 200]);
    expect(lines.map((l) => l.seq)).toEqual([1, 2, 3, 4]);
    // The report names the Glue schema, the version's UUID and its number, as for Confluent's.
    expect(lines[0]?.value).toEqual({
      type: 'AVRO',
      subject: name,
      schema_id: id,
      schema_version: 1,
      size: expect.any(Number),
    });
    expect(lines[3]).toMatchObject({ value: { subject: name, schema_id: id } });
    const read = await readDecoded(topic, 4, 'AVRO', ORDER_AVRO);
    expect(read.map((r) => r.header)).toMatchObject(
      Array(4).fill({ headerVersion: 3, compression: 0, schemaVersionId: id }),
    );
    expect(read.map((r) => r.value)).toEqual(
      [1, 2, 3, 4].map((n) => ({ id: `a${n}`, quantity: n })),
    );
  });

  it('serializes Protobuf and JSON Schema with the same codecs', async () => {
    const topic = await createTopic(admin, 1);
    const proto = await createSchema(`${topic}-proto`, 'PROTOBUF', ORDER_PROTO);
    const json = await createSchema(`${topic}-json`, 'JSON', ORDER_JSON);
    const response = await produce(topic, [
      { value: { schema_id: proto, data: { id: 'p1', quantity: 7 } } },
      {
        value: {
          type: 'JSONSCHEMA',
          schema: ORDER_JSON,
          subject: `${topic}-json`,
          data: { id: 'j1', quantity: 9 },
        },
      },
    ]);
    expect(
      reportLines(response).map((l) => [
        l.error_code,
        (l.value as { schema_id: string }).schema_id,
      ]),
    ).toEqual([
      [200, proto],
      [200, json],
    ]);
    const read = await readBack(topic, 2);
    const bySeq = read.sort(
      (a, b) =>
        Number(a.headers?.['tally.seq']?.toString()) - Number(b.headers?.['tally.seq']?.toString()),
    );
    expect(await decodeGlueValue(bySeq[0]?.value as Buffer, 'PROTOBUF', ORDER_PROTO)).toEqual({
      id: 'p1',
      quantity: 7,
    });
    expect(await decodeGlueValue(bySeq[1]?.value as Buffer, 'JSON', ORDER_JSON)).toEqual({
      id: 'j1',
      quantity: 9,
    });
  });

  it('refuses an unknown schema in its own entry (4xx naming it), registers nothing, sends the others with dense seqs', async () => {
    const topic = await createTopic(admin, 1);
    const name = `${topic}-orders`;
    await createSchema(name, 'AVRO', ORDER_AVRO);
    const unregistered = ORDER_AVRO.replace('"Order"', '"NeverRegistered"');
    glue.calls.length = 0;
    const response = await produce(topic, [
      { value: { subject: name, data: { id: 'o1', quantity: 1 } } },
      {
        value: {
          type: 'AVRO',
          schema: unregistered,
          subject: name,
          data: { id: 'o2', quantity: 2 },
        },
      },
      { value: { subject: `${topic}-missing`, data: { id: 'o3', quantity: 3 } } },
      { value: { subject: name, schema_version: 5, data: { id: 'o4', quantity: 4 } } },
      { value: { subject: name, data: { id: 'o5', quantity: 5 } } },
    ]);
    expect(response.statusCode, response.body).toBe(200);
    const lines = reportLines(response);
    expect(lines.map((l) => l.error_code)).toEqual([200, 42207, 42207, 400, 200]);
    expect(lines[1]?.message).toMatch(
      new RegExp(
        `^value\\.schema: AWS Glue registry ${REGISTRY} has no schema ${name} with this definition.*TALLY_GLUE_AUTO_REGISTER is off`,
      ),
    );
    expect(lines[2]?.message).toMatch(
      new RegExp(`schema ${topic}-missing of registry ${REGISTRY}: AWS Glue has none`),
    );
    expect(lines[3]?.message).toMatch(/version 5 of schema/);
    expect(lines.filter((l) => l.error_code === 200).map((l) => l.seq)).toEqual([1, 2]);
    // Auto-registration is off by default: Glue was only asked, never written to.
    expect(glue.calls.filter((c) => c === 'RegisterSchemaVersion' || c === 'CreateSchema')).toEqual(
      [],
    );
    expect(await totalRecords(admin, topic)).toBe(2);
  });

  it('answers 503 (retriable, nothing sent, no seq) while Glue throttles, and 500 naming the grants when it denies', async () => {
    const topic = await createTopic(admin, 1);
    await createSchema(`${topic}-orders`, 'AVRO', ORDER_AVRO);
    glue.failNext('ThrottlingException', 2);
    const throttled = await produce(topic, [
      { value: { subject: `${topic}-orders`, data: { id: 't1', quantity: 1 } } },
    ]);
    expect(throttled.statusCode).toBe(503);
    expect(reportLines(throttled)[0]).toMatchObject({ error_code: 503, retriable: true });
    expect(reportLines(throttled)[0]?.message).toMatch(/nothing was sent/);
    glue.accessDenied = true;
    try {
      const denied = await produce(topic, [
        { value: { subject: `${topic}-orders`, data: { id: 't2', quantity: 2 } } },
      ]);
      expect(denied.statusCode).toBe(500);
      expect(reportLines(denied)[0]).toMatchObject({ error_code: 500, retriable: false });
    } finally {
      glue.accessDenied = false;
    }
    expect(await totalRecords(admin, topic)).toBe(0);
    const after = await produce(topic, [
      { value: { subject: `${topic}-orders`, data: { id: 't3', quantity: 3 } } },
    ]);
    expect(reportLines(after)[0]).toMatchObject({ error_code: 200, seq: 1 });
  });
});
