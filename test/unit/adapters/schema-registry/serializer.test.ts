import avro from 'avsc';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import type { SchemaType } from '../../../../functions/adapters/schema-registry/codec.js';
import {
  SchemaNotFoundError,
  SchemaValidationError,
  UnsupportedSchemaError,
} from '../../../../functions/adapters/schema-registry/errors.js';
import type {
  RegisteredSchema,
  SchemaRegistryClient,
} from '../../../../functions/adapters/schema-registry/registry-client.js';
import {
  createSchemaSerializer,
  type SchemaReference,
} from '../../../../functions/adapters/schema-registry/serializer.js';
import { unframe } from '../../../../functions/adapters/schema-registry/wire-format.js';

const ORDER_AVRO = JSON.stringify({
  type: 'record',
  name: 'Order',
  namespace: 'shop',
  fields: [
    { name: 'id', type: 'string' },
    { name: 'quantity', type: 'int' },
    { name: 'note', type: ['null', 'string'], default: null },
  ],
});
const ORDER_PROTO = `syntax = "proto3";
package shop;
message Order {
  string id = 1;
  int32 quantity = 2;
  repeated Line lines = 3;
}
message Line { string sku = 1; int32 count = 2; }
`;
const ORDER_JSON = JSON.stringify({
  type: 'object',
  properties: {
    id: { type: 'string' },
    lines: {
      type: 'array',
      items: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
    },
  },
  required: ['id'],
});

/** An in-memory registry behind the client port, counting what it is asked. */
function fakeRegistry() {
  const schemas = new Map<number, RegisteredSchema>();
  const subjects = new Map<string, number[]>();
  const calls: string[] = [];
  const add = (subject: string, type: SchemaType, schema: string, hasReferences = false) => {
    const existing = [...schemas.values()].find((s) => s.type === type && s.schema === schema);
    const id = existing?.id ?? schemas.size + 1;
    schemas.set(id, { id, type, schema, hasReferences });
    const versions = subjects.get(subject) ?? [];
    if (!versions.includes(id)) subjects.set(subject, [...versions, id]);
    return id;
  };
  const client: SchemaRegistryClient = {
    async schemaById(id, field) {
      calls.push(`id ${id}`);
      const schema = schemas.get(id);
      if (!schema) throw new SchemaNotFoundError(`no schema ${id}`, { field, errorCode: 40403 });
      return schema;
    },
    async subjectVersion(subject, version, field) {
      calls.push(`subject ${subject} ${version}`);
      const versions = subjects.get(subject) ?? [];
      const at = version === 'latest' ? versions.length : version;
      const id = versions[at - 1];
      const schema = id === undefined ? undefined : schemas.get(id);
      if (!schema) throw new SchemaNotFoundError(`no ${subject}`, { field, errorCode: 40401 });
      return { ...schema, version: at };
    },
    async register(subject, type, schema) {
      calls.push(`register ${subject}`);
      return add(subject, type, schema);
    },
    async versionUnder(subject, type, schema, field) {
      calls.push(`version under ${subject}`);
      const versions = subjects.get(subject);
      const id = [...schemas.values()].find((s) => s.type === type && s.schema === schema)?.id;
      const index = id === undefined ? -1 : (versions?.indexOf(id) ?? -1);
      if (versions === undefined)
        throw new SchemaNotFoundError(`no ${subject}`, { field, errorCode: 40401 });
      if (index < 0) throw new SchemaNotFoundError('no such schema', { field, errorCode: 40403 });
      return index + 1;
    },
  };
  return { client, add, calls };
}

async function rejection(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof Error)) throw new Error('expected a rejection');
  return error as Error & Record<string, unknown>;
}

describe('schema serializer: encoding', () => {
  it('frames Avro as magic byte 0, the 4-byte id, then the Avro binary', async () => {
    const registry = fakeRegistry();
    registry.add('orders-value', 'AVRO', ORDER_AVRO);
    const id = registry.add('orders-value', 'AVRO', ORDER_AVRO.replace('"Order"', '"Order2"'));
    const serializer = createSchemaSerializer({ registry: registry.client });
    const value = { id: 'o-1', quantity: 3, note: { string: 'gift' } };
    const framed = await serializer.serialize({ kind: 'id', id }, value, 'value');
    expect([...framed.subarray(0, 5)]).toEqual([0, 0, 0, 0, 2]);
    const reader = avro.Type.forSchema(JSON.parse(ORDER_AVRO));
    expect({ ...reader.fromBuffer(unframe(framed)?.body as Buffer) }).toEqual({
      id: 'o-1',
      quantity: 3,
      note: 'gift',
    });
  });

  it('takes Avro bytes as Avro JSON encodes them: a string of code points 0-255', async () => {
    const schema = JSON.stringify({
      type: 'record',
      name: 'Blob',
      fields: [{ name: 'data', type: 'bytes' }],
    });
    const registry = fakeRegistry();
    const id = registry.add('blobs-value', 'AVRO', schema);
    const serializer = createSchemaSerializer({ registry: registry.client });
    const framed = await serializer.serialize(
      { kind: 'id', id },
      { data: '\u0000\u00ffA' },
      'value',
    );
    const decoded = avro.Type.forSchema(JSON.parse(schema)).fromBuffer(
      unframe(framed)?.body as Buffer,
    );
    expect([...(decoded.data as Buffer)]).toEqual([0, 255, 65]);
  });

  it('frames Protobuf with the first message index (0) before the message', async () => {
    const registry = fakeRegistry();
    const id = registry.add('orders-value', 'PROTOBUF', ORDER_PROTO);
    const serializer = createSchemaSerializer({ registry: registry.client });
    const value = { id: 'o-1', quantity: 3, lines: [{ sku: 'a', count: 1 }] };
    const framed = await serializer.serialize({ kind: 'id', id }, value, 'value');
    const { schemaId, body } = unframe(framed) ?? { schemaId: -1, body: Buffer.alloc(0) };
    expect(schemaId).toBe(id);
    expect(body[0]).toBe(0);
    const message = protobuf.parse(ORDER_PROTO).root.lookupType('shop.Order');
    expect(message.toObject(message.decode(body.subarray(1)))).toEqual(value);
  });

  it('writes JSON Schema values as UTF-8 JSON after the header', async () => {
    const registry = fakeRegistry();
    const id = registry.add('orders-value', 'JSON', ORDER_JSON);
    const serializer = createSchemaSerializer({ registry: registry.client });
    const value = { id: 'ö-1', lines: [{ sku: 'a' }] };
    const framed = await serializer.serialize({ kind: 'id', id }, value, 'value');
    expect(JSON.parse(unframe(framed)?.body.toString('utf8') ?? '')).toEqual(value);
  });
});

describe('schema serializer: a value that does not match is a 400 naming the field', () => {
  const cases: Array<[SchemaType, string, unknown, string, RegExp]> = [
    ['AVRO', ORDER_AVRO, { id: 'o', quantity: 'two' }, 'value.data.quantity', /must be int/],
    ['AVRO', ORDER_AVRO, { id: 'o' }, 'value.data.quantity', /required/],
    [
      'AVRO',
      ORDER_AVRO,
      { id: 'o', quantity: 1, colour: 'red' },
      'value.data.colour',
      /not a field of shop.Order/,
    ],
    ['AVRO', ORDER_AVRO, { id: 'o', quantity: 1, note: 'unwrapped' }, 'value.data.note', /must be/],
    [
      'AVRO',
      JSON.stringify({
        type: 'record',
        name: 'Blob',
        fields: [
          { name: 'data', type: 'bytes' },
          { name: 'size', type: 'long' },
        ],
      }),
      { data: 'abc', size: 'big' },
      'value.data.size',
      /must be long/,
    ],
    ['PROTOBUF', ORDER_PROTO, { id: 'o', quantity: 'two' }, 'value.data.quantity', /integer/],
    ['PROTOBUF', ORDER_PROTO, { id: 'o', colour: 'red' }, 'value.data.colour', /not a field/],
    [
      'PROTOBUF',
      ORDER_PROTO,
      { id: 'o', lines: [{ sku: 'a' }, { sku: 'b', size: 1 }] },
      'value.data.lines[1].size',
      /not a field of Line/,
    ],
    ['PROTOBUF', ORDER_PROTO, 'not an object', 'value.data', /object/],
    ['JSON', ORDER_JSON, { lines: [] }, 'value.data.id', /required/],
    [
      'JSON',
      ORDER_JSON,
      { id: 'o', lines: [{ sku: 'a' }, {}] },
      'value.data.lines[1].sku',
      /required/,
    ],
    ['JSON', ORDER_JSON, { id: 7 }, 'value.data.id', /string/],
  ];
  it.each(cases)('%s: %j → %s', async (type, schema, value, field, message) => {
    const registry = fakeRegistry();
    const id = registry.add('s', type, schema);
    const serializer = createSchemaSerializer({ registry: registry.client });
    const error = await rejection(serializer.serialize({ kind: 'id', id }, value, 'value'));
    expect(error).toBeInstanceOf(SchemaValidationError);
    expect(error).toMatchObject({
      name: 'SchemaValidationError',
      status: 400,
      field,
      retriable: false,
    });
    expect(error.message).toMatch(message);
    expect(error.message.startsWith(field)).toBe(true);
  });
});

/** A serializer over an empty fake registry, and ORDER_JSON as an inline reference. */
function inlineJson(subject: Extract<SchemaReference, { kind: 'inline' }>['subject']) {
  const registry = fakeRegistry();
  const serializer = createSchemaSerializer({ registry: registry.client });
  const reference: SchemaReference = { kind: 'inline', type: 'JSON', schema: ORDER_JSON, subject };
  return { registry, serializer, reference };
}

describe('schema serializer: resolving and caching', () => {
  it("refuses a schema version's UUID (AWS Glue's id) with a 400 naming schema_id, asking nothing", async () => {
    const registry = fakeRegistry();
    const serializer = createSchemaSerializer({ registry: registry.client });
    const reference: SchemaReference = { kind: 'id', id: '6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f' };
    const refused = await serializer.encode(reference, {}, 'value').catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, field: 'value.schema_id' });
    expect((refused as Error).message).toMatch(/ids are integers.*TALLY_SCHEMA_REGISTRY=glue/);
    expect(registry.calls).toEqual([]);
  });

  it('asks the registry once per schema id and per fixed subject version', async () => {
    const registry = fakeRegistry();
    const id = registry.add('orders-value', 'JSON', ORDER_JSON);
    const serializer = createSchemaSerializer({ registry: registry.client });
    const references: SchemaReference[] = [
      { kind: 'id', id },
      { kind: 'subject', subject: 'orders-value', version: 1 },
    ];
    for (let i = 0; i < 3; i++) {
      for (const reference of references)
        await serializer.serialize(reference, { id: 'x' }, 'value');
    }
    expect(registry.calls).toEqual(['id 1', 'subject orders-value 1']);
  });

  it('trusts the latest version of a subject for latestTtlMs, then asks again', async () => {
    const registry = fakeRegistry();
    registry.add('orders-value', 'JSON', ORDER_JSON);
    let clock = 0;
    const serializer = createSchemaSerializer({
      registry: registry.client,
      now: () => clock,
      latestTtlMs: 1000,
    });
    const latest: SchemaReference = { kind: 'subject', subject: 'orders-value', version: 'latest' };
    const first = await serializer.serialize(latest, { id: 'x' }, 'value');
    registry.add('orders-value', 'JSON', JSON.stringify({ type: 'object' }));
    clock = 999;
    expect(unframe(await serializer.serialize(latest, { id: 'x' }, 'value'))?.schemaId).toBe(
      unframe(first)?.schemaId,
    );
    clock = 1000;
    expect(unframe(await serializer.serialize(latest, { id: 'x' }, 'value'))?.schemaId).toBe(2);
    expect(registry.calls).toEqual(['subject orders-value latest', 'subject orders-value latest']);
  });

  it('registers an inline schema once, under its subject or the one its strategy names', async () => {
    const registry = fakeRegistry();
    const serializer = createSchemaSerializer({ registry: registry.client });
    const inline = (
      subject: Extract<SchemaReference, { kind: 'inline' }>['subject'],
    ): SchemaReference => ({
      kind: 'inline',
      type: 'AVRO',
      schema: ORDER_AVRO,
      subject,
    });
    const value = { id: 'o', quantity: 1, note: null };
    await serializer.serialize(inline('orders-value'), value, 'value');
    await serializer.serialize(inline('orders-value'), value, 'value');
    await serializer.serialize(
      inline({ strategy: 'TOPIC_NAME', topic: 'orders', part: 'key' }),
      value,
      'key',
    );
    await serializer.serialize(
      inline({ strategy: 'RECORD_NAME', topic: 'orders', part: 'value' }),
      value,
      'value',
    );
    await serializer.serialize(
      inline({ strategy: 'TOPIC_RECORD_NAME', topic: 'orders', part: 'value' }),
      value,
      'value',
    );
    // Each registered once, then asked its version there (REST Proxy's getVersion after register).
    expect(registry.calls).toEqual(
      ['orders-value', 'orders-key', 'shop.Order', 'orders-shop.Order'].flatMap((subject) => [
        `register ${subject}`,
        `version under ${subject}`,
      ]),
    );
    expect(await serializer.encode(inline('orders-value'), value, 'value')).toMatchObject({
      type: 'AVRO',
      id: 1,
      subject: 'orders-value',
      version: 1,
    });
  });

  it('names the subject and the version under it for each way of choosing a schema', async () => {
    const registry = fakeRegistry();
    registry.add('orders-value', 'JSON', JSON.stringify({ type: 'object' }));
    const id = registry.add('orders-value', 'JSON', ORDER_JSON);
    const serializer = createSchemaSerializer({ registry: registry.client });
    const byTopic = { strategy: 'TOPIC_NAME', topic: 'orders', part: 'value' } as const;
    for (const reference of [
      { kind: 'id', id, subject: byTopic },
      { kind: 'subject', subject: 'orders-value', version: 'latest' },
      { kind: 'subject', subject: 'orders-value', version: 2 },
    ] as const) {
      expect(await serializer.encode(reference, { id: 'x' }, 'value')).toMatchObject({
        id,
        subject: 'orders-value',
        version: 2,
      });
    }
    // An id with no subject to check it against (a direct caller): neither is named.
    const bare = await serializer.encode({ kind: 'id', id }, { id: 'x' }, 'value');
    expect(bare).not.toHaveProperty('subject');
    expect(bare).not.toHaveProperty('version');
  });

  it('checks an inline value before registering: a mismatch registers nothing', async () => {
    const { registry, serializer, reference } = inlineJson('s');
    const error = await rejection(serializer.serialize(reference, {}, 'records[3].value'));
    expect(error).toMatchObject({ field: 'records[3].value.data.id' });
    expect(registry.calls).toEqual([]);
    await serializer.serialize(reference, { id: 'x' }, 'records[4].value');
    expect(registry.calls).toEqual(['register s', 'version under s']);
  });

  it('refuses RECORD_NAME for a schema that names no record', async () => {
    const strategy = { strategy: 'RECORD_NAME', topic: 'orders', part: 'value' } as const;
    const { registry, serializer, reference } = inlineJson(strategy);
    const error = await rejection(serializer.serialize(reference, { id: 'x' }, 'value'));
    expect(error).toMatchObject({ status: 422, field: 'value.subject_name_strategy' });
    expect(registry.calls).toEqual([]);
  });

  it('does not cache a failed look-up: the next call asks again', async () => {
    const registry = fakeRegistry();
    const serializer = createSchemaSerializer({ registry: registry.client });
    const error = await rejection(serializer.serialize({ kind: 'id', id: 1 }, {}, 'value'));
    expect(error).toMatchObject({
      name: 'SchemaNotFoundError',
      field: 'value.schema_id',
      errorCode: 40403,
    });
    registry.add('s', 'JSON', ORDER_JSON);
    await serializer.serialize({ kind: 'id', id: 1 }, { id: 'x' }, 'value');
    expect(registry.calls).toEqual(['id 1', 'id 1']);
  });

  it("checks that an id is registered under its subject, once per subject and id (REST Proxy's getSchemaFromSchemaId)", async () => {
    const registry = fakeRegistry();
    const id = registry.add('orders-value', 'AVRO', ORDER_AVRO);
    registry.add('other-value', 'JSON', ORDER_JSON);
    const serializer = createSchemaSerializer({ registry: registry.client });
    const value = { id: 'o', quantity: 1, note: null };
    const byTopic = { strategy: 'TOPIC_NAME', topic: 'orders', part: 'value' } as const;
    for (let i = 0; i < 3; i++)
      await serializer.serialize({ kind: 'id', id, subject: byTopic }, value, 'value');
    await serializer.serialize({ kind: 'id', id, subject: 'orders-value' }, value, 'value');
    expect(registry.calls).toEqual(['id 1', 'version under orders-value']);

    // Under another topic's subject, a subject the registry does not have, and RECORD_NAME's.
    for (const [subject, errorCode, named] of [
      [{ ...byTopic, topic: 'other' }, 40403, 'other-value'],
      ['nowhere', 40401, 'nowhere'],
      [{ ...byTopic, strategy: 'RECORD_NAME' }, 40401, 'shop.Order'],
    ] as const) {
      const error = await rejection(
        serializer.serialize({ kind: 'id', id, subject }, value, 'records[2].value'),
      );
      expect(error).toMatchObject({
        name: 'SchemaNotFoundError',
        field: 'records[2].value.schema_id',
        errorCode,
        message: `records[2].value.schema_id: schema ${id} is not registered under subject ${named}`,
      });
    }
    // A refusal is not cached: registered there since, the id goes.
    registry.add('nowhere', 'AVRO', ORDER_AVRO);
    await serializer.serialize({ kind: 'id', id, subject: 'nowhere' }, value, 'value');
    expect(registry.calls.filter((c) => c === 'version under nowhere')).toHaveLength(2);
  });

  it('refuses schemas it cannot use, naming why', async () => {
    const registry = fakeRegistry();
    const withReferences = registry.add('s', 'AVRO', ORDER_AVRO, true);
    const broken = registry.add('t', 'PROTOBUF', 'message {');
    const serializer = createSchemaSerializer({ registry: registry.client });
    for (const id of [withReferences, broken]) {
      const error = await rejection(serializer.serialize({ kind: 'id', id }, {}, 'value'));
      expect(error).toBeInstanceOf(UnsupportedSchemaError);
      expect(error).toMatchObject({ status: 422 });
    }
  });
});
