import { CreateSchemaCommand, GlueClient } from '@aws-sdk/client-glue';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGlueEncoder } from '../../../../functions/adapters/schema-registry/record-encoder.js';
import {
  parseSchemaPart,
  type SchemaEncoder,
} from '../../../../functions/core/rest-proxy/schema-input.js';
import { TallyError } from '../../../../functions/core/shared/errors.js';
import { type GlueStandIn, serveGlueStandIn } from '../../../../infra/local/glue-stand-in.js';
import { ORDER_AVRO, ORDER_PROTO, order } from '../../../fixtures/glue-order-schemas.js';
import { decodeGlueValue, readGlueHeader } from '../../../helpers/glue-decoder.js';

// The Glue encoder (createGlueEncoder: the real @aws-sdk/client-glue, Glue's wire format, the
// shared codecs) against the local stand-in for Glue's API: how a v3 body names a Glue schema,
// what Glue's refusals become, and that nothing is registered unless auto-registration is on.
// Every value is read back by the test's own header reader and Powertools' decoders.

const REGISTRY = 'tally-unit';
const ORDER_V2 = JSON.stringify({
  ...JSON.parse(ORDER_AVRO),
  fields: [...JSON.parse(ORDER_AVRO).fields, { name: 'note', type: 'string', default: '' }],
});
const ORDER_BROKEN = JSON.stringify({
  ...JSON.parse(ORDER_AVRO),
  fields: [...JSON.parse(ORDER_AVRO).fields, { name: 'required_now', type: 'string' }],
});

let glue: GlueStandIn;
let admin: GlueClient;
let schemaNumber = 0;

beforeAll(async () => {
  glue = await serveGlueStandIn({ registries: [REGISTRY] });
  admin = new GlueClient({
    region: glue.region,
    endpoint: glue.url,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
});
afterAll(async () => {
  admin.destroy();
  await glue.close();
});
beforeEach(() => {
  glue.accessDenied = false;
});

function encoderWith(options: { autoRegister?: boolean; compression?: 'none' | 'zlib' } = {}) {
  return createGlueEncoder({
    region: glue.region,
    endpoint: glue.url,
    registryName: REGISTRY,
    autoRegister: options.autoRegister ?? false,
    compression: options.compression ?? 'none',
    pollMs: 10,
  });
}

async function createSchema(definition: string, dataFormat: 'AVRO' | 'PROTOBUF' = 'AVRO') {
  schemaNumber += 1;
  const name = `orders-${schemaNumber}`;
  const created = await admin.send(
    new CreateSchemaCommand({
      RegistryId: { RegistryName: REGISTRY },
      SchemaName: name,
      DataFormat: dataFormat,
      Compatibility: 'BACKWARD',
      SchemaDefinition: definition,
    }),
  );
  return { name, id: created.SchemaVersionId as string };
}

function encode(encoder: SchemaEncoder, value: Record<string, unknown>, topic = 'orders') {
  return encoder.encode(parseSchemaPart(value, 'value', 'value'), topic);
}

/** An inline Avro value of the Glue schema `name`. */
const inlineAvro = (schema: string, name: string, data: unknown = order) => ({
  type: 'AVRO',
  schema,
  subject: name,
  data,
});

async function refusal(promise: Promise<unknown>): Promise<TallyError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TallyError);
  return error as TallyError;
}

describe('Glue encoder against the Glue stand-in', () => {
  it('encodes by subject and schema_version, the latest, and schema_id (a version UUID)', async () => {
    const { name, id } = await createSchema(ORDER_AVRO);
    const encoder = encoderWith();
    const byVersion = await encode(encoder, { subject: name, schema_version: 1, data: order });
    const latest = await encode(encoder, { subject: name, data: order });
    const byId = await encode(encoder, { schema_id: id, data: order });
    for (const encoded of [byVersion, latest, byId]) {
      expect(encoded).toMatchObject({
        type: 'AVRO',
        schemaId: id,
        subject: name,
        schemaVersion: 1,
      });
      const bytes = encoded.bytes as Buffer;
      expect(readGlueHeader(bytes)).toMatchObject({
        headerVersion: 3,
        compression: 0,
        schemaVersionId: id,
      });
      expect(await decodeGlueValue(bytes, 'AVRO', ORDER_AVRO)).toEqual(order);
    }
  });

  it('finds an inline schema by its definition (GetSchemaByDefinition), and zlib-compresses', async () => {
    const { name, id } = await createSchema(ORDER_PROTO, 'PROTOBUF');
    glue.calls.length = 0;
    const encoded = await encoderWith({ compression: 'zlib' }).encode(
      parseSchemaPart(
        { type: 'PROTOBUF', schema: ORDER_PROTO, subject: name, data: order },
        'value',
        'value',
      ),
      'orders',
    );
    expect(encoded).toMatchObject({ type: 'PROTOBUF', schemaId: id, subject: name });
    expect(glue.calls).toEqual(['GetSchemaByDefinition']);
    expect((encoded.bytes as Buffer)[1]).toBe(5);
    expect(await decodeGlueValue(encoded.bytes as Buffer, 'PROTOBUF', ORDER_PROTO)).toEqual(order);
  });

  it('does not register an unknown inline schema by default: 422 naming registry, schema and what to do', async () => {
    glue.calls.length = 0;
    const error = await refusal(
      encode(encoderWith(), {
        type: 'AVRO',
        schema: ORDER_AVRO,
        subject: 'never-made',
        data: order,
      }),
    );
    expect(error.status).toBe(422);
    expect(error.field).toBe('value.schema');
    expect(error.message).toMatch(/registry tally-unit has no schema never-made/);
    expect(error.message).toMatch(/\(TALLY_GLUE_AUTO_REGISTER is off\): register it in Glue first/);
    expect(glue.calls).toEqual(['GetSchemaByDefinition']);
  });

  it('with auto-registration: creates the schema, registers a compatible version, refuses an incompatible one', async () => {
    const encoder = encoderWith({ autoRegister: true });
    schemaNumber += 1;
    const name = `auto-${schemaNumber}`;
    const first = await encode(encoder, inlineAvro(ORDER_AVRO, name));
    expect(first).toMatchObject({ subject: name, schemaVersion: 1 });
    glue.calls.length = 0;
    const second = await encode(encoder, inlineAvro(ORDER_V2, name));
    // Registered PENDING, then polled until Glue's compatibility check made it AVAILABLE.
    expect(glue.calls).toEqual([
      'GetSchemaByDefinition',
      'RegisterSchemaVersion',
      'GetSchemaVersion',
    ]);
    expect(second).toMatchObject({ subject: name, schemaVersion: 2 });
    expect(second.schemaId).not.toBe(first.schemaId);
    expect(await decodeGlueValue(second.bytes as Buffer, 'AVRO', ORDER_V2)).toEqual({
      ...order,
      note: '',
    });
    const broken = await refusal(
      encode(encoder, {
        type: 'AVRO',
        schema: ORDER_BROKEN,
        subject: name,
        data: { ...order, required_now: 'x' },
      }),
    );
    expect(broken.status).toBe(422);
    expect(broken.message).toMatch(/not compatible .*FAILURE/);
  });

  it('with auto-registration: registers the version after all when another container created the schema first', async () => {
    const { name } = await createSchema(ORDER_AVRO);
    // As if the schema did not exist yet when this container asked: its CreateSchema races.
    glue.failNext('EntityNotFoundException', 1, 'RegisterSchemaVersion');
    glue.calls.length = 0;
    const encoded = await encode(encoderWith({ autoRegister: true }), inlineAvro(ORDER_V2, name));
    expect(glue.calls).toEqual([
      'GetSchemaByDefinition',
      'RegisterSchemaVersion',
      'CreateSchema',
      'RegisterSchemaVersion',
      'GetSchemaVersion',
    ]);
    expect(encoded).toMatchObject({ subject: name, schemaVersion: 2 });
  });

  it('answers a version Glue does not have 400, a schema it does not have 422, naming both', async () => {
    const { name } = await createSchema(ORDER_AVRO);
    const encoder = encoderWith();
    const version = await refusal(
      encode(encoder, { subject: name, schema_version: 9, data: order }),
    );
    expect(version.status).toBe(400);
    expect(version.message).toMatch(
      new RegExp(`version 9 of schema ${name} of registry tally-unit`),
    );
    const schema = await refusal(encode(encoder, { subject: 'no-such', data: order }));
    expect(schema).toMatchObject({ status: 422, field: 'value.subject' });
    expect(schema.message).toMatch(/schema no-such of registry tally-unit: AWS Glue has none/);
    const unknownId = await refusal(
      encode(encoder, { schema_id: '00000000-0000-4000-8000-000000000000', data: order }),
    );
    expect(unknownId).toMatchObject({ status: 422, field: 'value.schema_id' });
  });

  it('refuses a numeric schema_id, a name past Glue limits and data its schema refuses, 4xx naming the field', async () => {
    const { name } = await createSchema(ORDER_AVRO);
    const encoder = encoderWith();
    const numeric = await refusal(encode(encoder, { schema_id: 4, data: order }));
    expect(numeric).toMatchObject({ status: 400, field: 'value.schema_id' });
    expect(numeric.message).toMatch(/UUID/);
    const long = await refusal(encode(encoder, { subject: 'x'.repeat(256), data: order }));
    expect(long.status).toBe(422);
    expect(long.message).toMatch(/InvalidInputException: SchemaName must be 1 to 255/);
    const mismatch = await refusal(
      encode(encoder, { subject: name, data: { id: 'o', quantity: 'many' } }),
    );
    expect(mismatch).toMatchObject({ status: 400, field: 'value.data.quantity' });
  });

  it('makes throttling a retriable 503 and a denied role a 500 naming the grants, nothing encoded', async () => {
    const { name } = await createSchema(ORDER_AVRO);
    // Two: the SDK client retries once (sdkClientConfig's maxAttempts).
    glue.failNext('ThrottlingException', 2);
    const throttled = await refusal(encode(encoderWith(), { subject: name, data: order }));
    expect(throttled).toMatchObject({ status: 503, retriable: true });
    expect(throttled.message).toMatch(/nothing was sent/);
    glue.accessDenied = true;
    const denied = await refusal(encode(encoderWith(), { subject: name, data: order }));
    expect(denied.status).toBe(500);
    expect(denied.retriable).toBe(false);
    expect(denied.message).toMatch(/AccessDeniedException: grant it the glue: actions/);
  });
});
