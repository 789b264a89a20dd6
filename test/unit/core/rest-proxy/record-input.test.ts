import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import {
  DATA_TYPES,
  isNullHeaderValue,
  NULL_HEADER_VALUE,
  type RecordInput,
} from '../../../../functions/core/publish/record.js';
import {
  decodeBase64,
  parseData,
  parseHeaders,
  parsePartition,
  parseRecord,
  parseRecordOrError,
  parseTimestamp,
  RESERVED_HEADER_PREFIX,
} from '../../../../functions/core/rest-proxy/record-input.js';
import {
  InvalidInputError,
  NotFoundError,
  SchemaRegistryMissingError,
} from '../../../../functions/core/shared/errors.js';
import {
  isPlainObject,
  rejectUnknownFields,
} from '../../../../functions/core/shared/input-checks.js';

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

/** Runs `fn`, expecting an InvalidInputError about `field`; returns it. */
function invalidField(fn: () => unknown, field: string): InvalidInputError {
  const thrown = thrownBy(fn);
  expect(thrown).toBeInstanceOf(InvalidInputError);
  const error = thrown as InvalidInputError;
  expect(error.field).toBe(field);
  expect(error.message.startsWith(`${field}: `)).toBe(true);
  expect(error.status).toBe(400);
  return error;
}

describe('decodeBase64', () => {
  it('decodes padded and unpadded standard base64', () => {
    expect([...decodeBase64('AAEC', 'f')]).toEqual([0, 1, 2]);
    expect([...decodeBase64('AAE', 'f')]).toEqual([0, 1]);
    expect([...decodeBase64('AAE=', 'f')]).toEqual([0, 1]);
    expect([...decodeBase64('AA', 'f')]).toEqual([0]);
    expect([...decodeBase64('AA==', 'f')]).toEqual([0]);
    expect(decodeBase64('aGVsbG8gd29ybGQ=', 'f').toString('utf8')).toBe('hello world');
    expect([...decodeBase64('+/8=', 'f')]).toEqual([0xfb, 0xff]);
  });

  it('decodes the empty string to no bytes', () => {
    expect(decodeBase64('', 'f').length).toBe(0);
  });

  it('round-trips arbitrary bytes', () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    expect(decodeBase64(bytes.toString('base64'), 'f').equals(bytes)).toBe(true);
    const unpadded = bytes.subarray(0, 254).toString('base64').replace(/=+$/, '');
    expect(decodeBase64(unpadded, 'f').equals(bytes.subarray(0, 254))).toBe(true);
  });

  it.each(['A', '!!', 'AA=A', 'AA=', 'AAAAA', 'AA==AA==', 'AA AA', 'AAE==', '-_8=', '===='])(
    'rejects %j, naming the field',
    (text) => {
      const error = invalidField(() => decodeBase64(text, 'value.data'), 'value.data');
      expect(error.message).toContain('base64');
    },
  );
});

describe('parseData', () => {
  it('decodes BINARY data from base64', () => {
    const data = parseData({ type: 'BINARY', data: 'AAEC' }, 'value');
    expect(data.type).toBe('BINARY');
    expect([...(data.bytes ?? [])]).toEqual([0, 1, 2]);
  });

  it('encodes STRING data as UTF-8, multi-byte characters included', () => {
    const data = parseData({ type: 'STRING', data: 'héllo €😀' }, 'value');
    expect(data.type).toBe('STRING');
    expect(data.bytes?.toString('utf8')).toBe('héllo €😀');
    // "héllo" 6, " " 1, "€" 3, "😀" 4
    expect(data.bytes?.length).toBe(14);
  });

  it('encodes JSON data as compact JSON text', () => {
    const string = parseData({ type: 'JSON', data: 'bar' }, 'value');
    expect(string.bytes?.toString('utf8')).toBe('"bar"');
    expect(string.bytes?.length).toBe(5);
    const object = parseData({ type: 'JSON', data: { a: 1, b: [true, null, 'x'] } }, 'value');
    expect(object.bytes?.toString('utf8')).toBe('{"a":1,"b":[true,null,"x"]}');
    expect(parseData({ type: 'JSON', data: 42 }, 'v').bytes?.toString()).toBe('42');
    expect(parseData({ type: 'JSON', data: false }, 'v').bytes?.toString()).toBe('false');
    expect(parseData({ type: 'JSON', data: [] }, 'v').bytes?.toString()).toBe('[]');
    expect(parseData({ type: 'JSON', data: 'é' }, 'v').bytes?.length).toBe(4);
  });

  it.each(DATA_TYPES)('turns data null into a Kafka null for %s', (type) => {
    expect(parseData({ type, data: null }, 'key')).toEqual({ type, bytes: null });
  });

  it('keeps an empty STRING or BINARY as zero bytes, not null', () => {
    expect(parseData({ type: 'STRING', data: '' }, 'v').bytes?.length).toBe(0);
    expect(parseData({ type: 'BINARY', data: '' }, 'v').bytes?.length).toBe(0);
  });

  it('requires data', () => {
    const error = invalidField(() => parseData({ type: 'STRING' }, 'value'), 'value.data');
    expect(error.message).toContain('required');
  });

  it('rejects an unknown type, naming value.type', () => {
    const error = invalidField(
      () => parseData({ type: 'AVRO2', data: 'x' }, 'value'),
      'value.type',
    );
    expect(error.message).toContain('BINARY, JSON, STRING');
    invalidField(() => parseData({ type: 'string', data: 'x' }, 'value'), 'value.type');
    invalidField(() => parseData({ type: 1, data: 'x' }, 'key'), 'key.type');
  });

  // Without a schema registry REST Proxy answers every schema type, and a key or value with no
  // type (ProduceAction.getSchema asks the registry then), with SchemaManagerThrowing's
  // Errors.invalidPayloadException: a 422 whose message carries 42206 (ProduceActionTest.java
  // produceNoSchemaRegistryDefined, ProduceBatchActionTest.java testProduceNoSchemaRegistryDefined).
  it.each([
    [{ type: 'AVRO', schema: '{"type": "string"}', data: 'x' }, 'type AVRO'],
    [{ type: 'PROTOBUF', schema_id: 1, data: {} }, 'type PROTOBUF'],
    [{ type: 'JSONSCHEMA', subject: 's', schema_version: 2, data: {} }, 'type JSONSCHEMA'],
    [{ schema_id: 7, data: { a: 1 } }, 'no type'],
    [{ subject_name_strategy: 'TOPIC_NAME', data: 'x' }, 'no type'],
    [{ data: 'x' }, 'no type'],
  ])('answers %j as REST Proxy without a registry: 422, 42206', (input, which) => {
    const error = thrownBy(() => parseData(input, 'value'));
    expect(error).toBeInstanceOf(SchemaRegistryMissingError);
    const missing = error as SchemaRegistryMissingError;
    expect(missing.status).toBe(422);
    expect(missing.errorCode).toBe(422);
    expect(missing.field).toBe('value');
    expect(missing.message).toMatch(
      /^Error: 42206 : Payload error\. Schema Registry must be configured when using schemas\./,
    );
    expect(missing.message).toContain(which);
  });

  it('rejects data of the wrong JSON type for BINARY and STRING', () => {
    invalidField(() => parseData({ type: 'BINARY', data: 12 }, 'value'), 'value.data');
    invalidField(() => parseData({ type: 'STRING', data: { a: 1 } }, 'value'), 'value.data');
  });

  it('rejects BINARY data that is not base64', () => {
    invalidField(() => parseData({ type: 'BINARY', data: '!!' }, 'key'), 'key.data');
  });

  it('rejects a non-object and unknown fields', () => {
    invalidField(() => parseData('x', 'value'), 'value');
    invalidField(() => parseData(null, 'value'), 'value');
    invalidField(() => parseData(['STRING', 'x'], 'value'), 'value');
    const error = invalidField(
      () => parseData({ type: 'STRING', data: 'x', schemas: 's' }, 'value'),
      'value.schemas',
    );
    expect(error.message).toContain('unknown field');
  });

  it('refuses a schema field on a type without a schema, naming it', () => {
    const error = invalidField(
      () => parseData({ type: 'STRING', data: 'x', schema_id: 3 }, 'value'),
      'value.schema_id',
    );
    expect(error.message).toContain('AVRO, PROTOBUF, JSONSCHEMA');
  });
});

describe('parseHeaders', () => {
  it('decodes base64 header values and keeps order and duplicates', () => {
    const headers = parseHeaders(
      [
        { name: 'h1', value: 'AAEC' },
        { name: 'h2', value: '' },
        { name: 'h1', value: 'AA==' },
      ],
      'headers',
    );
    expect(headers.map((h) => h.name)).toEqual(['h1', 'h2', 'h1']);
    expect([...(headers[0]?.value ?? [])]).toEqual([0, 1, 2]);
    expect(headers[1]?.value).toEqual(Buffer.alloc(0));
    expect([...(headers[2]?.value ?? [])]).toEqual([0]);
  });

  // REST Proxy writes a header given no value as a Kafka null header (ProduceControllerImpl.java:
  // new RecordHeader(name, value.orElse(null))); "" stays the empty value.
  it('reads a null or missing header value as a Kafka null, "" as empty', () => {
    const headers = parseHeaders(
      [{ name: 'a', value: '' }, { name: 'b', value: null }, { name: 'c' }],
      'headers',
    );
    expect(headers.map((h) => isNullHeaderValue(h.value))).toEqual([false, true, true]);
    expect(headers[0]?.value).toEqual(Buffer.alloc(0));
    expect(headers[0]?.value).not.toBe(NULL_HEADER_VALUE);
    const error = invalidField(
      () => parseHeaders([{ name: 'a', value: 7 }], 'headers'),
      'headers[0].value',
    );
    expect(error.message).toContain('or null');
  });

  // REST Proxy reads a header value as padded base64 and refuses one without its padding.
  it.each(['AA', 'AAE', 'AA=', 'A', 'AA==AA', 'A-_='])(
    'rejects the header value %j: not padded base64',
    (value) => {
      const error = invalidField(
        () => parseHeaders([{ name: 'h', value }], 'headers'),
        'headers[0].value',
      );
      expect(error.message).toContain('padded base64');
    },
  );

  it('accepts an empty list', () => {
    expect(parseHeaders([], 'headers')).toEqual([]);
  });

  it(`rejects names starting with "${RESERVED_HEADER_PREFIX}"`, () => {
    const error = invalidField(
      () =>
        parseHeaders(
          [
            { name: 'ok', value: '' },
            { name: 'tally.seq', value: '' },
          ],
          'headers',
        ),
      'headers[1].name',
    );
    expect(error.message).toContain('tally.');
  });

  it('rejects empty and non-string names', () => {
    invalidField(() => parseHeaders([{ name: '', value: '' }], 'headers'), 'headers[0].name');
    invalidField(() => parseHeaders([{ value: 'AA' }], 'headers'), 'headers[0].name');
    invalidField(() => parseHeaders([{ name: 3, value: '' }], 'headers'), 'headers[0].name');
  });

  it('rejects values that are not base64 strings', () => {
    invalidField(
      () =>
        parseHeaders(
          [
            { name: 'a', value: 'AA==' },
            { name: 'b', value: 5 },
          ],
          'headers',
        ),
      'headers[1].value',
    );
    invalidField(() => parseHeaders([{ name: 'a', value: 'A' }], 'headers'), 'headers[0].value');
  });

  it('rejects a non-list, non-object entries and unknown fields', () => {
    invalidField(() => parseHeaders({ name: 'a' }, 'headers'), 'headers');
    invalidField(() => parseHeaders(['a'], 'headers'), 'headers[0]');
    invalidField(
      () => parseHeaders([{ name: 'a', value: '', key: 'k' }], 'headers'),
      'headers[0].key',
    );
  });
});

describe('parsePartition', () => {
  it('returns non-negative integers and undefined for absent or null', () => {
    expect(parsePartition(0, 'partition_id')).toBe(0);
    expect(parsePartition(7, 'partition_id')).toBe(7);
    expect(parsePartition(undefined, 'partition_id')).toBeUndefined();
    expect(parsePartition(null, 'partition_id')).toBeUndefined();
  });

  it.each([-1, 1.5, '1', Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, true, {}])(
    'rejects %j',
    (input) => {
      const error = invalidField(() => parsePartition(input, 'partition_id'), 'partition_id');
      expect(error.message).toContain('non-negative integer');
    },
  );
});

describe('parseTimestamp', () => {
  it('returns epoch milliseconds for ISO-8601 date-times with a zone', () => {
    expect(parseTimestamp('2026-11-29T16:00:00Z', 'timestamp')).toBe(
      Date.UTC(2026, 10, 29, 16, 0, 0),
    );
    expect(parseTimestamp('2026-11-29T16:00:00.123Z', 't')).toBe(
      Date.UTC(2026, 10, 29, 16, 0, 0, 123),
    );
    expect(parseTimestamp('2026-11-29T17:00:00+01:00', 't')).toBe(Date.UTC(2026, 10, 29, 16));
    expect(parseTimestamp('2026-11-29T10:30:00-0530', 't')).toBe(Date.UTC(2026, 10, 29, 16));
    expect(parseTimestamp('2026-11-29T16:00Z', 't')).toBe(Date.UTC(2026, 10, 29, 16));
    expect(parseTimestamp('1970-01-01T00:00:00Z', 't')).toBe(0);
  });

  it('returns undefined for absent or null', () => {
    expect(parseTimestamp(undefined, 'timestamp')).toBeUndefined();
    expect(parseTimestamp(null, 'timestamp')).toBeUndefined();
  });

  it.each([
    '2026-11-29T16:00:00',
    '2026-11-29 16:00:00Z',
    '2026-11-29',
    '2026-11-29T16:00:00z',
    'yesterday',
    '',
    1795968000000,
  ])('rejects %j, which is not an ISO-8601 date-time with a zone', (input) => {
    const error = invalidField(() => parseTimestamp(input, 'timestamp'), 'timestamp');
    expect(error.message).toContain('ISO-8601');
  });

  it('rejects date-times before 1970 and impossible times', () => {
    invalidField(() => parseTimestamp('1969-12-31T23:59:59Z', 'timestamp'), 'timestamp');
    invalidField(() => parseTimestamp('2026-13-01T00:00:00Z', 'timestamp'), 'timestamp');
    invalidField(() => parseTimestamp('2026-11-29T25:00:00Z', 'timestamp'), 'timestamp');
  });

  it('rejects calendar dates that do not exist (February 30th, April 31st)', () => {
    // V8's Date.parse rolls these over into the next month instead of failing, so the record
    // would be written with a timestamp the client never sent.
    const accepted = (text: string) => {
      try {
        return new Date(parseTimestamp(text, 'timestamp') ?? Number.NaN).toISOString();
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidInputError);
        expect((error as InvalidInputError).field).toBe('timestamp');
        return 'rejected';
      }
    };
    expect(accepted('2026-02-30T00:00:00Z')).toBe('rejected');
    expect(accepted('2026-04-31T00:00:00Z')).toBe('rejected');
    expect(accepted('2025-02-29T12:00:00Z')).toBe('rejected');
    // A real leap day is fine.
    expect(accepted('2028-02-29T12:00:00Z')).toBe('2028-02-29T12:00:00.000Z');
  });
});

describe('parseRecord', () => {
  it('parses a full v3 record', () => {
    const record = parseRecord({
      partition_id: 2,
      key: { type: 'STRING', data: 'k' },
      value: { type: 'JSON', data: { n: 1 } },
      headers: [{ name: 'h', value: 'AAE=' }],
      timestamp: '2026-11-29T16:00:00Z',
    });
    expect(record.partition).toBe(2);
    expect(record.key?.type).toBe('STRING');
    expect(record.key?.bytes?.toString()).toBe('k');
    expect(record.value?.bytes?.toString()).toBe('{"n":1}');
    expect(record.headers).toHaveLength(1);
    expect(record.headers[0]?.name).toBe('h');
    expect([...(record.headers[0]?.value ?? [])]).toEqual([0, 1]);
    expect(record.timestamp).toBe(Date.UTC(2026, 10, 29, 16));
  });

  it('leaves absent fields undefined and headers empty', () => {
    expect(parseRecord({})).toEqual({
      partition: undefined,
      key: undefined,
      value: undefined,
      headers: [],
      timestamp: undefined,
    });
  });

  it('keeps data null as bytes null', () => {
    const record = parseRecord({ value: { type: 'BINARY', data: null } });
    expect(record.value).toEqual({ type: 'BINARY', bytes: null });
  });

  it('names every problem with the field path', () => {
    invalidField(() => parseRecord({ value: { type: 'STRING' } }), 'value.data');
    invalidField(() => parseRecord({ value: { type: 'X', data: 'a' } }), 'value.type');
    invalidField(() => parseRecord({ key: { type: 'BINARY', data: '!!' } }), 'key.data');
    invalidField(
      () =>
        parseRecord({
          headers: [
            { name: 'a', value: '' },
            { name: 'tally.stream', value: '' },
          ],
        }),
      'headers[1].name',
    );
    invalidField(() => parseRecord({ partition_id: 1.5 }), 'partition_id');
    invalidField(() => parseRecord({ timestamp: '2026-11-29T16:00:00' }), 'timestamp');
  });

  // kafka-rest ProduceBatchAction.java: a partitionId < 0 is Errors.partitionNotFoundException()
  // (40402, "Partition not found."), asserted by ProduceBatchActionTest.testProduceNegativePartitionId.
  it('answers a negative partition_id as a partition that does not exist (40402)', () => {
    const error = parseRecordOrError({ partition_id: -1 }, 'entries[3].');
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ errorCode: 40402, field: 'entries[3].partition_id' });
  });

  it('rejects unknown record fields, naming them', () => {
    const error = invalidField(() => parseRecord({ partition: 1 }), 'partition');
    expect(error.message).toContain('unknown field');
    expect(error.message).toContain('partition_id');
    invalidField(() => parseRecord({ value: { type: 'STRING', data: 'x' }, id: 'a' }), 'id');
  });

  it('rejects a record that is not an object', () => {
    invalidField(() => parseRecord('x'), 'record');
    invalidField(() => parseRecord(null), 'record');
    invalidField(() => parseRecord([]), 'record');
    invalidField(() => parseRecord(7, 'entries[2].'), 'entries[2]');
  });

  it('prefixes every field with `where`', () => {
    const where = 'entries[2].';
    invalidField(() => parseRecord({ value: { type: 'STRING' } }, where), 'entries[2].value.data');
    invalidField(
      () =>
        parseRecord(
          {
            headers: [
              { name: 'ok', value: '' },
              { name: '', value: '' },
            ],
          },
          where,
        ),
      'entries[2].headers[1].name',
    );
    invalidField(() => parseRecord({ bogus: 1 }, where), 'entries[2].bogus');
    invalidField(() => parseRecord({ partition_id: 'x' }, where), 'entries[2].partition_id');
    invalidField(() => parseRecord({ timestamp: 'x' }, where), 'entries[2].timestamp');
    invalidField(
      () => parseRecord({ key: { type: 'STRING', data: 'x', extra: 1 } }, where),
      'entries[2].key.extra',
    );
  });
});

describe('parseRecordOrError', () => {
  it('returns the record when it is valid', () => {
    const result = parseRecordOrError({ value: { type: 'STRING', data: 'x' } });
    expect(result).not.toBeInstanceOf(InvalidInputError);
    expect((result as RecordInput).value?.bytes?.toString()).toBe('x');
  });

  it('returns, not throws, the InvalidInputError naming the field', () => {
    const result = parseRecordOrError({ value: { type: 'JSON' } }, 'entries[3].');
    expect(result).toBeInstanceOf(InvalidInputError);
    expect((result as InvalidInputError).field).toBe('entries[3].value.data');
    expect((result as InvalidInputError).message).toContain('entries[3].value.data');
  });
});

describe('helpers', () => {
  it('isPlainObject is true only for non-null, non-array objects', () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject({ a: 1 })).toBe(true);
    expect(isPlainObject([])).toBe(false);
    expect(isPlainObject(null)).toBe(false);
    expect(isPlainObject('x')).toBe(false);
    expect(isPlainObject(1)).toBe(false);
  });

  it('rejectUnknownFields names the first unknown field with its prefix', () => {
    expect(() => rejectUnknownFields({ a: 1 }, new Set(['a', 'b']), 'x.')).not.toThrow();
    invalidField(() => rejectUnknownFields({ a: 1, c: 2 }, new Set(['a']), 'x.'), 'x.c');
  });
});
