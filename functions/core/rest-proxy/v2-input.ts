import { Buffer } from 'node:buffer';
import type { RecordData, RecordHeader, RecordInput } from '../publish/record.js';
import { InvalidInputError, UnprocessableInputError } from '../shared/errors.js';
import { isPlainObject, rejectUnknownFields } from '../shared/input-checks.js';
import { requireMediaType } from './content-type.js';
import { decodeBase64, NO_HEADERS, parsePartition } from './record-input.js';

// REST Proxy v2 / Strimzi HTTP bridge produce:
// `{records: [{key, value, partition?, headers?, timestamp?}]}`.
// The embedded format comes from Content-Type: JSON values (json) or base64 strings (binary).

export type V2Format = 'json' | 'binary';

const V2_TYPES = [
  'application/vnd.kafka.json.v2+json',
  'application/vnd.kafka.binary.v2+json',
  'application/json',
];

/** The embedded format and charset a v2 request's Content-Type names (415 for another type). */
export function v2Format(contentType: string | undefined): {
  readonly format: V2Format;
  readonly charset: string | undefined;
} {
  const { mediaType, charset } = requireMediaType(contentType, V2_TYPES);
  const format = mediaType === 'application/vnd.kafka.binary.v2+json' ? 'binary' : 'json';
  return { format, charset };
}

function data(input: unknown, format: V2Format, field: string): RecordData | undefined {
  if (input === undefined) return undefined;
  if (input === null) return { type: format === 'binary' ? 'BINARY' : 'JSON', bytes: null };
  if (format === 'json') return { type: 'JSON', bytes: Buffer.from(JSON.stringify(input), 'utf8') };
  if (typeof input !== 'string')
    throw new InvalidInputError(`${field}: must be a base64 string`, { field });
  return { type: 'BINARY', bytes: decodeBase64(input, field) };
}

const RECORD_FIELDS = new Set(['key', 'value', 'partition', 'headers', 'timestamp']);

/**
 * A v2 record's timestamp as the Strimzi bridge takes it (0.30.0, strimzi-kafka-bridge#915):
 * epoch milliseconds, as its consumer records carry them. Confluent's v2 proxy has none.
 */
function timestamp(input: unknown, field: string): number | undefined {
  if (input === undefined || input === null) return undefined;
  if (typeof input !== 'number' || !Number.isSafeInteger(input) || input < 0) {
    throw new InvalidInputError(`${field}: epoch milliseconds, a non-negative integer`, { field });
  }
  return input;
}
const HEADER_FIELDS = new Set(['key', 'value']);

function headers(input: unknown, field: string): readonly RecordHeader[] {
  if (input === undefined) return NO_HEADERS;
  if (!Array.isArray(input))
    throw new InvalidInputError(`${field}: must be a list of {key, value}`, { field });
  return input.map((header: unknown, i) => {
    const at = `${field}[${i}]`;
    if (!isPlainObject(header) || typeof header.key !== 'string' || header.key.length === 0) {
      throw new InvalidInputError(`${at}: must be {key: non-empty string, value: base64}`, {
        field: at,
      });
    }
    rejectUnknownFields(header, HEADER_FIELDS, `${at}.`);
    if (header.key.startsWith('tally.')) {
      throw new InvalidInputError(`${at}.key: headers starting with "tally." are set by Tally`, {
        field: `${at}.key`,
      });
    }
    const value = header.value;
    if (typeof value !== 'string') {
      throw new InvalidInputError(`${at}.value: must be a base64 string ("" for empty)`, {
        field: `${at}.value`,
      });
    }
    return { name: header.key, value: decodeBase64(value, `${at}.value`) };
  });
}

export function parseV2Record(
  input: unknown,
  format: V2Format,
  i: number,
): RecordInput | InvalidInputError {
  const where = `records[${i}]`;
  try {
    if (!isPlainObject(input))
      throw new InvalidInputError(`${where}: must be an object`, { field: where });
    rejectUnknownFields(input, RECORD_FIELDS, `${where}.`);
    return {
      partition: parsePartition(input.partition, `${where}.partition`),
      key: data(input.key, format, `${where}.key`),
      value: data(input.value, format, `${where}.value`),
      headers: headers(input.headers, `${where}.headers`),
      timestamp: timestamp(input.timestamp, `${where}.timestamp`),
    };
  } catch (error) {
    if (error instanceof InvalidInputError) return error;
    throw error;
  }
}

export function parseV2Body(body: unknown, format: V2Format, maxRecords: number) {
  if (!isPlainObject(body))
    throw new InvalidInputError('body: must be an object {records: [...]}', { field: 'body' });
  rejectUnknownFields(
    body,
    new Set(['records', 'key_schema', 'key_schema_id', 'value_schema', 'value_schema_id']),
    '',
  );
  const { records } = body;
  if (!Array.isArray(records) || records.length === 0) {
    throw new InvalidInputError('records: must be a non-empty list', { field: 'records' });
  }
  if (records.length > maxRecords) {
    throw new InvalidInputError(
      `records: ${records.length} records; at most ${maxRecords} per request`,
      { field: 'records' },
    );
  }
  const parsed = records.map((record: unknown, i) => parseV2Record(record, format, i));
  // The v2 proxy and the Strimzi bridge refuse a request holding a record that is not valid as a
  // whole (the bridge's openapi.json: 422 "The record is not valid."): nothing is sent.
  const invalid = parsed.find((record) => record instanceof InvalidInputError);
  if (invalid !== undefined) {
    throw new UnprocessableInputError(invalid.message, {
      field: invalid.field ?? 'records',
      cause: invalid,
    });
  }
  return parsed as RecordInput[];
}
