import { describe, expect, it } from 'vitest';
import {
  SchemaNotFoundError,
  SchemaRefusedError,
  SchemaRegistryUnavailableError,
  SchemaValidationError,
  UnsupportedSchemaError,
} from '../../../../functions/adapters/schema-registry/errors.js';
import {
  createRecordEncoder,
  referenceOf,
} from '../../../../functions/adapters/schema-registry/record-encoder.js';
import type { SchemaSerializer } from '../../../../functions/adapters/schema-registry/serializer.js';
import type { SchemaPart } from '../../../../functions/core/rest-proxy/schema-input.js';

// The SchemaEncoder port over the serializer: which reference each REST Proxy choice becomes,
// and the error REST Proxy answers for each thing that can go wrong (kafka-rest
// controllers/SchemaManagerImpl.java, controllers/SchemaRecordSerializerImpl.java, Errors.java).

const part = (schema: SchemaPart['schema'], role: 'key' | 'value' = 'value'): SchemaPart => ({
  schema,
  data: { id: 'x' },
  field: `entries[1].${role}`,
  role,
});

describe('referenceOf', () => {
  it('names the subject from the topic for TOPIC_NAME, and passes the other strategies on', () => {
    expect(referenceOf(part({ id: 4, subject: { strategy: 'TOPIC_NAME' } }), 'orders')).toEqual({
      kind: 'id',
      id: 4,
      subject: { strategy: 'TOPIC_NAME', topic: 'orders', part: 'value' },
    });
    expect(referenceOf(part({ id: 4, subject: { subject: 's' } }), 'orders')).toEqual({
      kind: 'id',
      id: 4,
      subject: 's',
    });
    expect(
      referenceOf(
        part({ subject: { strategy: 'TOPIC_NAME' }, version: 'latest' }, 'key'),
        'orders',
      ),
    ).toEqual({ kind: 'subject', subject: 'orders-key', version: 'latest' });
    expect(referenceOf(part({ subject: { subject: 's' }, version: 3 }), 'orders')).toEqual({
      kind: 'subject',
      subject: 's',
      version: 3,
    });
    expect(
      referenceOf(
        part({ subject: { strategy: 'RECORD_NAME' }, inline: { type: 'JSONSCHEMA', text: '{}' } }),
        'orders',
      ),
    ).toEqual({
      kind: 'inline',
      type: 'JSON',
      schema: '{}',
      subject: { strategy: 'RECORD_NAME', topic: 'orders', part: 'value' },
    });
  });
});

describe('createRecordEncoder', () => {
  const failingWith = (error: Error): SchemaSerializer => ({
    serialize: () => Promise.reject(error),
    encode: () => Promise.reject(error),
  });
  const byId: SchemaPart['schema'] = { id: 1, subject: { strategy: 'TOPIC_NAME' } };
  const codeOf = async (error: Error, schema: SchemaPart['schema'] = byId) =>
    createRecordEncoder(failingWith(error))
      .encode(part(schema), 't')
      .catch((e: unknown) => e);

  it("answers with the schema's REST Proxy type and id", async () => {
    const serializer: SchemaSerializer = {
      serialize: () => Promise.reject(new Error('not used')),
      encode: async () => ({ bytes: Buffer.from([0, 0, 0, 0, 9]), type: 'JSON', id: 9 }),
    };
    expect(await createRecordEncoder(serializer).encode(part(byId), 't')).toEqual({
      bytes: Buffer.from([0, 0, 0, 0, 9]),
      type: 'JSONSCHEMA',
      schemaId: 9,
    });
  });

  it('maps each failure to the code REST Proxy answers, keeping the field', async () => {
    const mismatch = new SchemaValidationError('entries[1].value.data.id is not a string', {
      field: 'entries[1].value.data.id',
    });
    expect(await codeOf(mismatch)).toBe(mismatch);
    expect(
      await codeOf(
        new SchemaNotFoundError('entries[1].value.schema_id: no such id', {
          field: 'entries[1].value.schema_id',
          errorCode: 40403,
        }),
      ),
    ).toMatchObject({
      status: 422,
      errorCode: 42207,
      field: 'entries[1].value.schema_id',
    });
    expect(
      await codeOf(new SchemaNotFoundError('no version 3', { field: 'entries[1].value.subject' }), {
        subject: { subject: 's' },
        version: 3,
      }),
    ).toMatchObject({ status: 400, errorCode: 400, field: 'entries[1].value.subject' });
    expect(
      await codeOf(
        new SchemaRefusedError('incompatible', {
          field: 'entries[1].value.schema',
          errorCode: 409,
        }),
        {
          subject: { subject: 's' },
          inline: { type: 'AVRO', text: '"string"' },
        },
      ),
    ).toMatchObject({ status: 422, errorCode: 42207 });
    expect(
      await codeOf(new UnsupportedSchemaError('entries[1].value.schema is not an AVRO schema'), {
        subject: { subject: 's' },
        inline: { type: 'AVRO', text: '{' },
      }),
    ).toMatchObject({ status: 422, errorCode: 42205, field: 'entries[1].value.schema' });
    expect(
      await codeOf(
        new SchemaRegistryUnavailableError('no answer', { field: 'entries[1].value.schema_id' }),
      ),
    ).toMatchObject({ status: 503, retriable: true });
  });
});
