import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import type { RecordInput } from '../../../../functions/core/publish/record.js';
import {
  parseV2Body,
  parseV2Record,
  v2Format,
} from '../../../../functions/core/rest-proxy/v2-input.js';
import {
  InvalidInputError,
  UnprocessableInputError,
  UnsupportedMediaTypeError,
} from '../../../../functions/core/shared/errors.js';

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

function record(result: RecordInput | InvalidInputError): RecordInput {
  if (result instanceof InvalidInputError) throw new Error(`unexpected: ${result.message}`);
  return result;
}

function problem(result: RecordInput | InvalidInputError, field: string): InvalidInputError {
  expect(result).toBeInstanceOf(InvalidInputError);
  const error = result as InvalidInputError;
  expect(error.field).toBe(field);
  expect(error.message).toContain(field);
  return error;
}

describe('v2Format', () => {
  it('reads the embedded format from Content-Type', () => {
    expect(v2Format('application/vnd.kafka.json.v2+json').format).toBe('json');
    expect(v2Format('application/vnd.kafka.binary.v2+json').format).toBe('binary');
    expect(v2Format('application/json').format).toBe('json');
  });

  it('defaults to json without a Content-Type', () => {
    expect(v2Format(undefined).format).toBe('json');
  });

  it('ignores parameters, case and whitespace', () => {
    expect(v2Format('application/json; charset=utf-8').format).toBe('json');
    expect(v2Format('application/vnd.kafka.binary.v2+json; charset=utf-8').format).toBe('binary');
    expect(v2Format('Application/VND.Kafka.JSON.v2+json').format).toBe('json');
    expect(v2Format('  application/json ;charset=UTF-8').format).toBe('json');
  });

  it.each([
    'text/plain',
    'application/vnd.kafka.avro.v2+json',
    'application/vnd.kafka.json.v3+json',
    'application/octet-stream',
    '',
  ])('refuses %j with 415', (contentType) => {
    const error = thrownBy(() => v2Format(contentType));
    expect(error).toBeInstanceOf(UnsupportedMediaTypeError);
    expect((error as UnsupportedMediaTypeError).status).toBe(415);
    expect((error as UnsupportedMediaTypeError).field).toBe('Content-Type');
  });
});

describe('parseV2Record (json)', () => {
  it('writes key and value as compact JSON', () => {
    const r = record(parseV2Record({ key: 'k', value: { a: [1, 2], b: 'x' } }, 'json', 0));
    expect(r.key).toEqual({ type: 'JSON', bytes: Buffer.from('"k"') });
    expect(r.value?.type).toBe('JSON');
    expect(r.value?.bytes?.toString()).toBe('{"a":[1,2],"b":"x"}');
    expect(r.partition).toBeUndefined();
    expect(r.timestamp).toBeUndefined();
    expect(r.headers).toEqual([]);
  });

  it('turns null into a Kafka null and leaves absent fields undefined', () => {
    const r = record(parseV2Record({ key: null, value: 1 }, 'json', 0));
    expect(r.key).toEqual({ type: 'JSON', bytes: null });
    expect(r.value?.bytes?.toString()).toBe('1');
    expect(record(parseV2Record({ value: 'v' }, 'json', 0)).key).toBeUndefined();
  });

  // The Strimzi bridge 0.30.0 (strimzi-kafka-bridge#915) sets a record's timestamp from the
  // request, in epoch milliseconds as its consumer records show them.
  it('takes a timestamp in epoch milliseconds, as the Strimzi bridge does', () => {
    expect(record(parseV2Record({ value: 1, timestamp: 1719663008510 }, 'json', 0)).timestamp).toBe(
      1719663008510,
    );
    expect(
      record(parseV2Record({ value: 1, timestamp: null }, 'json', 0)).timestamp,
    ).toBeUndefined();
    for (const bad of [-1, 1.5, '2026-11-29T10:00:00Z', '1719663008510']) {
      problem(parseV2Record({ value: 1, timestamp: bad }, 'json', 2), 'records[2].timestamp');
    }
  });

  it('takes the partition', () => {
    expect(record(parseV2Record({ value: 1, partition: 4 }, 'json', 0)).partition).toBe(4);
    problem(parseV2Record({ value: 1, partition: -1 }, 'json', 2), 'records[2].partition');
    problem(parseV2Record({ value: 1, partition: '1' }, 'json', 0), 'records[0].partition');
  });

  it('takes headers as {key, value} with base64 values', () => {
    const r = record(
      parseV2Record(
        {
          value: 1,
          headers: [
            { key: 'a', value: 'AAEC' },
            { key: 'b', value: '' },
            { key: 'a', value: 'AA==' },
          ],
        },
        'json',
        0,
      ),
    );
    expect(r.headers.map((h) => h.name)).toEqual(['a', 'b', 'a']);
    expect([...(r.headers[0]?.value ?? [])]).toEqual([0, 1, 2]);
    expect(r.headers[1]?.value).toEqual(Buffer.alloc(0));
    expect([...(r.headers[2]?.value ?? [])]).toEqual([0]);
  });

  it('names the field of each header problem', () => {
    const at = (headers: unknown) => parseV2Record({ value: 1, headers }, 'json', 1);
    problem(at({ key: 'a' }), 'records[1].headers');
    problem(at([{ name: 'a', value: '' }]), 'records[1].headers[0]');
    problem(at([{ key: '', value: '' }]), 'records[1].headers[0]');
    problem(at([{ key: 'a', value: 'AA' }, 'x']), 'records[1].headers[1]');
    problem(at([{ key: 'tally.seq', value: '' }]), 'records[1].headers[0].key');
    problem(at([{ key: 'a', value: 5 }]), 'records[1].headers[0].value');
    problem(at([{ key: 'a', value: null }]), 'records[1].headers[0].value');
    problem(at([{ key: 'a' }]), 'records[1].headers[0].value');
    problem(at([{ key: 'a', value: '!!' }]), 'records[1].headers[0].value');
    problem(at([{ key: 'a', value: '', extra: 1 }]), 'records[1].headers[0].extra');
  });

  it('rejects unknown fields and non-objects', () => {
    problem(parseV2Record({ value: 1, partition_id: 0 }, 'json', 3), 'records[3].partition_id');
    problem(parseV2Record('x', 'json', 5), 'records[5]');
    problem(parseV2Record(null, 'json', 0), 'records[0]');
  });
});

describe('parseV2Record (binary)', () => {
  it('decodes base64 key and value', () => {
    const r = record(parseV2Record({ key: 'AAE', value: 'aGk=' }, 'binary', 0));
    expect(r.key?.type).toBe('BINARY');
    expect([...(r.key?.bytes ?? [])]).toEqual([0, 1]);
    expect(r.value).toEqual({ type: 'BINARY', bytes: Buffer.from('hi') });
  });

  it('turns null into a Kafka null', () => {
    expect(record(parseV2Record({ value: null }, 'binary', 0)).value).toEqual({
      type: 'BINARY',
      bytes: null,
    });
  });

  it('rejects non-strings and invalid base64, naming the field', () => {
    problem(parseV2Record({ value: 12 }, 'binary', 0), 'records[0].value');
    problem(parseV2Record({ value: { a: 1 } }, 'binary', 0), 'records[0].value');
    problem(parseV2Record({ key: 'A', value: 'AA' }, 'binary', 4), 'records[4].key');
  });
});

describe('parseV2Body', () => {
  it('parses each record', () => {
    const results = parseV2Body(
      { records: [{ value: 'aGk=' }, { key: 'AA', value: null }] },
      'binary',
      10,
    );
    expect(results).toHaveLength(2);
    expect(record(results[0] as RecordInput).value?.bytes?.toString()).toBe('hi');
    expect(record(results[1] as RecordInput).value?.bytes).toBeNull();
  });

  // The Strimzi bridge's openapi.json (POST /topics/{topicname}): 422 "The record is not valid."
  it('refuses the whole request with 422 for one record that is not valid, naming it', () => {
    let thrown: unknown;
    try {
      parseV2Body({ records: [{ value: 'aGk=' }, { value: 7 }] }, 'binary', 10);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UnprocessableInputError);
    expect(thrown).toMatchObject({ status: 422, field: 'records[1].value' });
  });

  it('accepts and ignores schema fields', () => {
    const results = parseV2Body(
      { records: [{ value: { a: 1 } }], value_schema: 'x', key_schema_id: 1 },
      'json',
      10,
    );
    expect(record(results[0] as RecordInput).value?.bytes?.toString()).toBe('{"a":1}');
  });

  it('rejects other top-level fields, a non-object, and an empty list', () => {
    const unknown = thrownBy(() =>
      parseV2Body({ records: [{ value: 1 }], entries: [] }, 'json', 10),
    );
    expect(unknown).toBeInstanceOf(InvalidInputError);
    expect((unknown as InvalidInputError).field).toBe('entries');
    const notObject = thrownBy(() => parseV2Body([{ value: 1 }], 'json', 10));
    expect((notObject as InvalidInputError).field).toBe('body');
    const empty = thrownBy(() => parseV2Body({ records: [] }, 'json', 10));
    expect(empty).toBeInstanceOf(InvalidInputError);
    expect((empty as InvalidInputError).field).toBe('records');
    const missing = thrownBy(() => parseV2Body({}, 'json', 10));
    expect((missing as InvalidInputError).field).toBe('records');
  });

  it('accepts exactly maxRecords and rejects one more', () => {
    const records = (n: number) => Array.from({ length: n }, (_, i) => ({ value: i }));
    expect(parseV2Body({ records: records(2) }, 'json', 2)).toHaveLength(2);
    const error = thrownBy(() => parseV2Body({ records: records(3) }, 'json', 2));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).field).toBe('records');
    expect((error as InvalidInputError).message).toContain('3');
  });
});
