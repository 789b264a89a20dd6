import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaValidationError } from '../../functions/adapters/schema-registry/errors.js';
import { createSchemaRegistryClient } from '../../functions/adapters/schema-registry/registry-client.js';
import {
  createSchemaSerializer,
  type SchemaReference,
} from '../../functions/adapters/schema-registry/serializer.js';
import { testKafka } from '../helpers/kafka.js';
import {
  registryCall,
  startTestSchemaRegistry,
  type TestSchemaRegistry,
} from '../helpers/schema-registry.js';
import { createTopicsEverywhere } from '../helpers/topics.js';
import { uniqueName } from '../helpers/unique-name.js';

// The local stack's schema registry (Apicurio Registry from Maven Central, plain java, in-memory
// storage) answers the Confluent Schema Registry API as producers and consumers use it.
const ORDER_AVRO = {
  type: 'record',
  name: 'Order',
  namespace: 'tally.test',
  fields: [{ name: 'id', type: 'string' }],
};
const ORDER_PROTO =
  'syntax = "proto3";\npackage tally.test;\nmessage Order {\n  string id = 1;\n  int32 quantity = 2;\n}\n';
const ORDER_JSON_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: { id: { type: 'string' }, quantity: { type: 'integer' } },
  required: ['id'],
};

// One registry for the file, started when it runs (other files do not pay for it).
let registry: TestSchemaRegistry;
beforeAll(async () => {
  registry = await startTestSchemaRegistry();
});
afterAll(async () => {
  await registry?.stop();
});

describe('the local schema registry', () => {
  it('runs as a process of the stack, named in its ready line', () => {
    if (process.env.TALLY_SCHEMA_REGISTRY_URL) return; // a given registry is not ours to see
    expect(registry.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/apis\/ccompat\/v7$/);
    expect(registry.stack.processes.map((p) => p.name)).toEqual(['schema registry (Apicurio)']);
    expect(registry.stack.readyLine()).toContain(` schema-registry=${registry.url}`);
  });

  it('registers an Avro, a Protobuf and a JSON Schema subject and serves each schema by id', async () => {
    const subjects = {
      AVRO: { schema: JSON.stringify(ORDER_AVRO) },
      PROTOBUF: { schemaType: 'PROTOBUF', schema: ORDER_PROTO },
      JSON: { schemaType: 'JSON', schema: JSON.stringify(ORDER_JSON_SCHEMA) },
    };
    const ids = new Set<number>();
    for (const [type, request] of Object.entries(subjects)) {
      const subject = `${uniqueName(type.toLowerCase())}-value`;
      const registered = await registryCall(
        registry.url,
        'POST',
        `/subjects/${subject}/versions`,
        request,
      );
      expect(registered, type).toEqual({ status: 200, body: { id: expect.any(Number) } });
      const { id } = registered.body as { id: number };
      ids.add(id);

      const byId = await registryCall(registry.url, 'GET', `/schemas/ids/${id}`);
      expect(byId.status, type).toBe(200);
      expect(byId.body, type).toMatchObject({ schema: request.schema, schemaType: type });
      const latest = await registryCall(
        registry.url,
        'GET',
        `/subjects/${subject}/versions/latest`,
      );
      expect(latest.body, type).toMatchObject({ subject, version: 1, id, schema: request.schema });
    }
    expect(ids.size).toBe(3);
  });

  it('keeps versions per subject, one id per schema, and refuses an incompatible change', async () => {
    const subject = `${uniqueName('versions')}-value`;
    const first = await registryCall(registry.url, 'POST', `/subjects/${subject}/versions`, {
      schema: JSON.stringify(ORDER_AVRO),
    });
    const again = await registryCall(registry.url, 'POST', `/subjects/${subject}/versions`, {
      schema: JSON.stringify(ORDER_AVRO),
    });
    expect(again.body).toEqual(first.body);

    await registryCall(registry.url, 'PUT', `/config/${subject}`, { compatibility: 'BACKWARD' });
    const withField = (field: Record<string, unknown>) => ({
      schema: JSON.stringify({ ...ORDER_AVRO, fields: [...ORDER_AVRO.fields, field] }),
    });
    const breaking = await registryCall(
      registry.url,
      'POST',
      `/subjects/${subject}/versions`,
      withField({ name: 'quantity', type: 'int' }),
    );
    expect(breaking.status).toBe(409);
    expect(breaking.body).toMatchObject({ error_code: 409 });
    const compatible = await registryCall(
      registry.url,
      'POST',
      `/subjects/${subject}/versions`,
      withField({ name: 'quantity', type: 'int', default: 0 }),
    );
    expect(compatible.status).toBe(200);
    expect(compatible.body).not.toEqual(first.body);
    expect((await registryCall(registry.url, 'GET', `/subjects/${subject}/versions`)).body).toEqual(
      [1, 2],
    );
  });

  it('answers with Confluent error codes: 42201 for what is no schema, 40403 for an unknown id', async () => {
    const bad = await registryCall(
      registry.url,
      'POST',
      `/subjects/${uniqueName('bad')}/versions`,
      {
        schema: '{"type": "record", "name": "X", "fields": [{"name": "a", "type": "nosuchtype"}]}',
      },
    );
    expect(bad).toMatchObject({ status: 422, body: { error_code: 42201 } });
    const unknown = await registryCall(registry.url, 'GET', '/schemas/ids/987654');
    expect(unknown).toMatchObject({ status: 404, body: { error_code: 40403 } });
  });
});

// The adapter against the real registry: what it frames, a plain Kafka consumer reads back and
// @kafkajs/confluent-schema-registry (a decoder that shares no code with the adapter) decodes,
// fetching each schema by the id in the frame.
describe('the schema serializer against the local registry, through Kafka', () => {
  it('frames Avro, Protobuf and JSON Schema values that an independent consumer decodes', async () => {
    const topic = uniqueName('schema-produce');
    const serializer = createSchemaSerializer({
      registry: createSchemaRegistryClient({ url: registry.url }),
    });
    // Avro by a subject's latest version, Protobuf by id, JSON Schema inline (registered here).
    await registryCall(registry.url, 'POST', `/subjects/${topic}-avro/versions`, {
      schema: JSON.stringify(ORDER_AVRO),
    });
    const proto = await registryCall(registry.url, 'POST', `/subjects/${topic}-proto/versions`, {
      schemaType: 'PROTOBUF',
      schema: ORDER_PROTO,
    });
    const sent: Array<[SchemaReference, unknown]> = [
      [{ kind: 'subject', subject: `${topic}-avro`, version: 'latest' }, { id: 'avro-1' }],
      [
        { kind: 'id', id: (proto.body as { id: number }).id },
        { id: 'proto-1', quantity: 4 },
      ],
      [
        {
          kind: 'inline',
          type: 'JSON',
          schema: JSON.stringify(ORDER_JSON_SCHEMA),
          subject: { strategy: 'TOPIC_NAME', topic, part: 'value' },
        },
        { id: 'json-1', quantity: 5 },
      ],
    ];
    const values = await Promise.all(
      sent.map(([reference, data]) => serializer.serialize(reference, data, 'value')),
    );

    const kafka = testKafka('schema-registry-local');
    const admin = kafka.admin();
    await admin.connect();
    await createTopicsEverywhere(admin, [{ topic, numPartitions: 1 }]);
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages: values.map((value) => ({ value })) });
    await producer.disconnect();
    const read = await readValues(kafka, topic, values.length).finally(async () => {
      await admin.deleteTopics({ topics: [topic] }).catch(() => {});
      await admin.disconnect();
    });

    const decoder = new SchemaRegistry({ host: registry.url });
    const decoded = await Promise.all(read.map((value) => decoder.decode(value)));
    expect({ ...decoded[0] }).toEqual({ id: 'avro-1' });
    expect(decoded[1]?.toJSON()).toEqual({ id: 'proto-1', quantity: 4 });
    expect(decoded[2]).toEqual({ id: 'json-1', quantity: 5 });
    expect(
      (await registryCall(registry.url, 'GET', `/subjects/${topic}-value/versions`)).body,
    ).toEqual([1]);
  });

  it('refuses a value that does not match its schema, naming the field, before anything is framed', async () => {
    const serializer = createSchemaSerializer({
      registry: createSchemaRegistryClient({ url: registry.url }),
    });
    const subject = `${uniqueName('mismatch')}-value`;
    await registryCall(registry.url, 'POST', `/subjects/${subject}/versions`, {
      schemaType: 'JSON',
      schema: JSON.stringify(ORDER_JSON_SCHEMA),
    });
    const error = await serializer
      .serialize(
        { kind: 'subject', subject, version: 1 },
        { id: 'x', quantity: 'many' },
        'records[0].value',
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaValidationError);
    expect(error).toMatchObject({ status: 400, field: 'records[0].value.data.quantity' });
    const missing = await serializer
      .serialize(
        { kind: 'subject', subject: `${subject}-none`, version: 'latest' },
        {},
        'records[1].value',
      )
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({
      name: 'SchemaNotFoundError',
      field: 'records[1].value.subject',
    });
  });
});

/** Every value of a one-partition topic from the start, with a bounded wait. */
async function readValues(kafka: Kafka, topic: string, count: number): Promise<Buffer[]> {
  const consumer = kafka.consumer({ groupId: uniqueName('schema-reader') });
  const values: Buffer[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`read ${values.length} of ${count} values`)),
        30_000,
      );
      void consumer.run({
        eachMessage: async ({ message }) => {
          if (message.value) values.push(message.value);
          if (values.length >= count) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return values;
}
