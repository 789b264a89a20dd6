import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { parseBatch } from '../../../../functions/core/rest-proxy/batch-input.js';
import {
  parsedRecordOrError,
  parseRecordParts,
} from '../../../../functions/core/rest-proxy/record-input.js';
import {
  encodeSchemaParts,
  type ParsedRecord,
  type SchemaEncoder,
  type SchemaPart,
} from '../../../../functions/core/rest-proxy/schema-input.js';
import {
  DependencyUnavailableError,
  InvalidInputError,
  SchemaRegistryMissingError,
  type TallyError,
} from '../../../../functions/core/shared/errors.js';

// The schema fields of a REST Proxy v3 key or value, parsed into a pending part (nothing asked
// of a registry yet), and the step that serializes pending parts through the SchemaEncoder port.
// The combinations are REST Proxy's (kafka-rest SchemaManagerImpl.getSchema); every refusal is
// a 400 naming its field.

const parse = (value: unknown, where = '') => parseRecordParts({ value }, where, undefined, true);
const pending = (value: unknown) => parse(value).value as SchemaPart;

function refusal(value: unknown, field: string, where = ''): InvalidInputError {
  let thrown: unknown;
  try {
    parse(value, where);
  } catch (error) {
    thrown = error;
  }
  expect(thrown, JSON.stringify(value)).toBeInstanceOf(InvalidInputError);
  const error = thrown as InvalidInputError;
  expect(error.field, JSON.stringify(value)).toBe(field);
  expect(error.message.startsWith(`${field}: `)).toBe(true);
  expect(error.errorCode).toBe(400);
  return error;
}

describe('schema fields of a key or value', () => {
  it('reads each way of choosing a schema into a pending part, naming where it sits', () => {
    expect(pending({ schema_id: 7, data: { a: 1 } })).toEqual({
      schema: { id: 7, subject: { strategy: 'TOPIC_NAME' } },
      data: { a: 1 },
      field: 'value',
      role: 'value',
    });
    expect(pending({ subject: 's', schema_version: 2, data: 1 }).schema).toEqual({
      subject: { subject: 's' },
      version: 2,
    });
    expect(pending({ subject: 's', data: 1 }).schema).toEqual({
      subject: { subject: 's' },
      version: 'latest',
    });
    // No subject and no strategy: TopicNameStrategy, as REST Proxy's default.
    expect(pending({ data: 1 }).schema).toEqual({
      subject: { strategy: 'TOPIC_NAME' },
      version: 'latest',
    });
    expect(pending({ schema_version: 3, data: 1 }).schema).toEqual({
      subject: { strategy: 'TOPIC_NAME' },
      version: 3,
    });
    expect(
      pending({
        type: 'PROTOBUF',
        schema: 'syntax',
        subject_name_strategy: 'RECORD_NAME',
        data: {},
      }).schema,
    ).toEqual({
      subject: { strategy: 'RECORD_NAME' },
      inline: { type: 'PROTOBUF', text: 'syntax' },
    });
    expect(pending({ type: 'JSONSCHEMA', schema: '{}', subject: 'x', data: {} }).schema).toEqual({
      subject: { subject: 'x' },
      inline: { type: 'JSONSCHEMA', text: '{}' },
    });
    // A schema_id with a subject or strategy is REST Proxy's too: the id decides the schema,
    // and must be registered under that subject.
    expect(pending({ schema_id: 1, subject: 's', data: 1 }).schema).toEqual({
      id: 1,
      subject: { subject: 's' },
    });
    expect(pending({ schema_id: 1, subject_name_strategy: 'RECORD_NAME', data: 1 }).schema).toEqual(
      { id: 1, subject: { strategy: 'RECORD_NAME' } },
    );
    // Data null is a Kafka null, still resolved against its schema.
    expect(pending({ schema_id: 1, data: null }).data).toBeNull();
    // A schema version's UUID is an AWS Glue registry's id (its encoder takes it, Confluent's not).
    const uuid = '6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f';
    expect(pending({ schema_id: uuid, subject: 'orders', data: 1 }).schema).toEqual({
      id: uuid,
      subject: { subject: 'orders' },
    });
  });

  it('names the field of every combination REST Proxy does not take', () => {
    refusal({ schema_id: 1, type: 'AVRO', data: 1 }, 'value.type');
    refusal({ schema_id: 1, schema_version: 1, data: 1 }, 'value.schema_version');
    refusal({ schema_id: 1, schema: '"string"', data: 1 }, 'value.schema');
    refusal({ schema_version: 1, type: 'AVRO', data: 1 }, 'value.type');
    refusal({ schema_version: 1, schema: '"string"', data: 1 }, 'value.schema');
    refusal({ schema: '"string"', data: 1 }, 'value.type');
    refusal({ type: 'AVRO', data: 1 }, 'value.schema');
    refusal({ type: 'JSONSCHEMA', subject: 's', data: 1 }, 'value.schema');
    // RecordNameStrategy needs the schema in hand to name a subject.
    refusal({ subject_name_strategy: 'RECORD_NAME', data: 1 }, 'value.subject_name_strategy');
    refusal(
      { subject_name_strategy: 'TOPIC_RECORD_NAME', schema_version: 2, data: 1 },
      'value.subject_name_strategy',
    );
  });

  it('names each field that is not well formed', () => {
    refusal({ schema_id: '1', data: 1 }, 'value.schema_id');
    refusal({ schema_id: '6F1C2D3E-4A5B-4C6D-8E7F-0A1B2C3D4E5F', data: 1 }, 'value.schema_id');
    refusal({ schema_id: -1, data: 1 }, 'value.schema_id');
    refusal({ schema_id: 2 ** 31, data: 1 }, 'value.schema_id');
    refusal({ schema_version: 0, data: 1 }, 'value.schema_version');
    refusal({ schema_version: 1.5, data: 1 }, 'value.schema_version');
    refusal({ subject: '', data: 1 }, 'value.subject');
    refusal({ subject: 3, data: 1 }, 'value.subject');
    refusal({ subject_name_strategy: 'TopicNameStrategy', data: 1 }, 'value.subject_name_strategy');
    refusal(
      { subject: 's', subject_name_strategy: 'NONE', data: 1 },
      'value.subject_name_strategy',
    );
    refusal({ type: 'AVRO', schema: '', data: 1 }, 'value.schema');
    refusal({ type: 'XML', data: 1 }, 'value.type');
    // A schema field with a type that is not a schema type goes with nothing.
    refusal({ type: 'STRING', schema: 'x', data: 'a' }, 'value.schema');
    refusal({ schema_id: 1 }, 'value.data');
    refusal({ schema_id: 1, data: 1, extra: true }, 'value.extra');
    const entry = refusal(
      { schema_id: 1, type: 'AVRO', data: 1 },
      'entries[4].value.type',
      'entries[4].',
    );
    expect(entry.message).toContain('schema_id');
  });

  it('keeps 42206 without a registry, and a batch entry refused alone', () => {
    const without = parsedRecordOrError({ value: { schema_id: 1, data: 1 } }, '', undefined, false);
    expect(without).toBeInstanceOf(SchemaRegistryMissingError);
    expect(without).toMatchObject({ status: 422, field: 'value' });
    expect((without as TallyError).message).toMatch(/^Error: 42206 : /);
    const batch = parseBatch(
      {
        entries: [
          { id: 'a', key: { subject: 'k', data: 'x' }, value: { schema_id: 3, data: {} } },
          { id: 'b', value: { type: 'AVRO', data: {} } },
        ],
      },
      10,
      true,
    );
    expect((batch.records[0] as ParsedRecord).key).toMatchObject({
      field: 'entries[0].key',
      role: 'key',
    });
    expect(batch.records[1]).toBeInstanceOf(InvalidInputError);
    expect((batch.records[1] as InvalidInputError).field).toBe('entries[1].value.schema');
  });
});

describe('encodeSchemaParts', () => {
  const records = [
    parse({ schema_id: 1, data: 'ok' }),
    parsedRecordOrError({ value: { type: 'STRING', data: 'plain' } }, '', undefined, true),
    parse({ schema_id: 2, data: 'refused' }),
    parse({ schema_id: 3, data: 'unanswered' }),
    new InvalidInputError('value: refused by the parser', { field: 'value' }),
  ];
  const topics: string[] = [];
  const encoder: SchemaEncoder = {
    async encode(part, topic) {
      topics.push(topic);
      if ('id' in part.schema && part.schema.id === 2) {
        throw new InvalidInputError('value.data: not a match', { field: 'value.data' });
      }
      if ('id' in part.schema && part.schema.id === 3) {
        throw new DependencyUnavailableError('the schema registry did not answer');
      }
      return { bytes: Buffer.from(String(part.data)), type: 'AVRO', schemaId: 1 };
    },
  };

  it('serializes each pending part in order; a part that fails is its record error, the rest pass', async () => {
    const encoded = await encodeSchemaParts(records, 'orders', async () => encoder);
    expect(topics).toEqual(['orders', 'orders', 'orders']);
    expect(encoded[0]).toMatchObject({
      value: { type: 'AVRO', schemaId: 1, bytes: Buffer.from('ok') },
    });
    expect(encoded[1]).toBe(records[1]);
    expect(encoded[2]).toMatchObject({ errorCode: 400, field: 'value.data' });
    expect(encoded[3]).toMatchObject({ status: 503, retriable: true });
    expect(encoded[4]).toBe(records[4]);
  });

  it('asks for no encoder when no record has a schema part', async () => {
    const plain = [records[1] as ParsedRecord];
    const encoded = await encodeSchemaParts(plain, 'orders', () => {
      throw new Error('not asked');
    });
    expect(encoded).toBe(plain);
  });

  it('rejects on an error that is not a TallyError (a bug, not a record problem)', async () => {
    const broken: SchemaEncoder = {
      encode: () => Promise.reject(new TypeError('bug')),
    };
    await expect(
      encodeSchemaParts([records[0] as ParsedRecord], 't', async () => broken),
    ).rejects.toThrow('bug');
  });
});
