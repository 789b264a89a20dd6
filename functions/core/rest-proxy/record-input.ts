import { Buffer } from 'node:buffer';
import {
  DATA_TYPES,
  NULL_HEADER_VALUE,
  type RecordData,
  type RecordHeader,
  type RecordInput,
} from '../publish/record.js';
import {
  InvalidInputError,
  NotFoundError,
  SchemaRegistryMissingError,
  TallyError,
} from '../shared/errors.js';
import { isPlainObject, rejectUnknownFields } from '../shared/input-checks.js';
import { type ParsedRecord, parseSchemaPart, type SchemaPart } from './schema-input.js';

// Parses Confluent REST Proxy v3 record objects into the bytes that will be written, or, for a
// key or value with a schema (when a registry is configured), into a part that is serialized
// before the publish (schema-input.ts). Every problem names the field, e.g. `value.data` or
// `headers[2].name`.

/** REST Proxy's types that are serialized with a schema from a schema registry. */
export const SCHEMA_TYPES: ReadonlySet<unknown> = new Set(['AVRO', 'PROTOBUF', 'JSONSCHEMA']);
/** REST Proxy's fields that choose a key's or value's schema. */
export const SCHEMA_FIELDS: ReadonlySet<string> = new Set([
  'schema_id',
  'schema_version',
  'subject',
  'subject_name_strategy',
  'schema',
]);

/** Headers Tally stamps on every record; a client may not set them. */
export const RESERVED_HEADER_PREFIX = 'tally.';

const RECORD_FIELDS = new Set(['partition_id', 'headers', 'key', 'value', 'timestamp']);
const DATA_FIELDS = new Set(['type', 'data']);
const HEADER_FIELDS = new Set(['name', 'value']);
/** Shared by every record without headers: nothing writes to a parsed record. */
export const NO_HEADERS: readonly RecordHeader[] = Object.freeze([]);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;
/** Standard base64 with its padding: what REST Proxy takes for a header's value. */
const PADDED_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/;

function invalid(field: string, message: string): never {
  throw new InvalidInputError(`${field}: ${message}`, { field });
}

/** Standard base64, padding optional. */
export function decodeBase64(text: string, field: string): Buffer {
  if (!BASE64.test(text)) invalid(field, 'is not valid base64');
  return Buffer.from(text, 'base64');
}

export function parseData(input: unknown, field: string): RecordData {
  return parseDataAt(input, field, '', false) as RecordData;
}

/**
 * `parseData` of the field `where` + `name`, a name made only for an error: a batch parses
 * thousands of keys and values that have none. With `schemas` (a registry is configured) a
 * part that asks for a schema is returned pending.
 */
function parseDataAt(
  input: unknown,
  where: string,
  name: 'key' | 'value' | '',
  schemas: boolean,
): RecordData | SchemaPart {
  if (!isPlainObject(input)) invalid(`${where}${name}`, 'must be an object {type, data}');
  const { type, data } = input;
  // REST Proxy asks its schema registry for any type that is not BINARY, JSON or STRING, an
  // absent one included (ProduceAction.getSchema); without a registry that is its 42206.
  if (type === undefined || type === null || SCHEMA_TYPES.has(type)) {
    if (!schemas || name === '') noSchemaRegistry(`${where}${name}`, type);
    return parseSchemaPart(input, `${where}${name}`, name);
  }
  for (const field in input) {
    if (field !== 'type' && field !== 'data') {
      if (SCHEMA_FIELDS.has(field) && Object.hasOwn(input, field)) {
        invalid(
          `${where}${name}.${field}`,
          `goes with a schema type (${[...SCHEMA_TYPES].join(', ')}), not ${String(type)}`,
        );
      }
      rejectUnknownFields(input, DATA_FIELDS, `${where}${name}.`);
      break;
    }
  }
  if (type !== 'STRING' && type !== 'BINARY' && type !== 'JSON') {
    invalid(`${where}${name}.type`, `must be one of ${DATA_TYPES.join(', ')}`);
  }
  if (data === undefined) invalid(`${where}${name}.data`, 'is required (null for a Kafka null)');
  if (data === null) return { type, bytes: null };
  switch (type) {
    case 'BINARY':
      if (typeof data !== 'string')
        invalid(`${where}${name}.data`, 'must be a base64 string for BINARY');
      return { type: 'BINARY', bytes: decodeBase64(data, `${where}${name}.data`) };
    case 'STRING':
      if (typeof data !== 'string') invalid(`${where}${name}.data`, 'must be a string for STRING');
      return { type: 'STRING', bytes: Buffer.from(data, 'utf8') };
    case 'JSON':
      return { type: 'JSON', bytes: Buffer.from(JSON.stringify(data), 'utf8') };
  }
}

function noSchemaRegistry(field: string, type: unknown): never {
  const which = type === undefined ? 'no type, so a schema is looked up' : `type ${String(type)}`;
  throw new SchemaRegistryMissingError(
    `Error: 42206 : Payload error. Schema Registry must be configured when using schemas. Field: ${field} (${which}); Tally has no schema registry configured.`,
    { field },
  );
}

export function parseHeaders(input: unknown, field: string): RecordHeader[] {
  if (!Array.isArray(input)) invalid(field, 'must be a list of {name, value}');
  return input.map((header: unknown, i) => {
    const at = `${field}[${i}]`;
    if (!isPlainObject(header)) invalid(at, 'must be an object {name, value}');
    rejectUnknownFields(header, HEADER_FIELDS, `${at}.`);
    const { name, value } = header;
    if (typeof name !== 'string' || name.length === 0) {
      invalid(`${at}.name`, 'must be a non-empty string');
    }
    if (name.startsWith(RESERVED_HEADER_PREFIX)) {
      invalid(`${at}.name`, `headers starting with "${RESERVED_HEADER_PREFIX}" are set by Tally`);
    }
    // No value is a Kafka null header, not "" (REST Proxy: an absent Optional<ByteString>).
    if (value === null || value === undefined) return { name, value: NULL_HEADER_VALUE };
    if (typeof value !== 'string') invalid(`${at}.value`, 'must be a base64 string or null');
    // REST Proxy refuses a header value without its padding ("AA" for "AA=="): so does Tally, in
    // that record's answer, rather than write bytes the same request would not get there.
    if (!PADDED_BASE64.test(value)) {
      invalid(
        `${at}.value`,
        'is not padded base64 (standard alphabet, "=" padding to 4 characters)',
      );
    }
    return { name, value: Buffer.from(value, 'base64') };
  });
}

export function parsePartition(input: unknown, field: string): number | undefined {
  if (input === undefined || input === null) return undefined;
  if (typeof input !== 'number' || !Number.isSafeInteger(input) || input < 0) {
    invalid(field, 'must be a non-negative integer');
  }
  return input;
}

/**
 * A v3 record's partition_id: a negative one is a partition that does not exist (40402, as
 * REST Proxy's ProduceBatchAction answers it); one past the topic's count is found so later,
 * when the topic is known (publish-plan.ts checkRecord).
 */
function parsePartitionId(input: unknown, field: string): number | undefined {
  if (typeof input === 'number' && Number.isSafeInteger(input) && input < 0) {
    throw new NotFoundError(`${field}: partition ${input} does not exist`, {
      field,
      errorCode: 40402,
    });
  }
  return parsePartition(input, field);
}

export function parseTimestamp(input: unknown, field: string): number | undefined {
  if (input === undefined || input === null) return undefined;
  if (typeof input !== 'string' || !ISO_8601.test(input)) {
    invalid(field, 'must be an ISO-8601 date-time with a zone, e.g. 2026-11-29T16:00:00Z');
  }
  // Date.parse rolls 2026-02-30 over into March: check the calendar fields ourselves.
  const [year, month, day, hour, minute, second = 0] = (input.match(/\d+/g) ?? []).map(Number);
  const calendar = new Date(Date.UTC(year ?? 0, (month ?? 1) - 1, day ?? 1));
  if (
    calendar.getUTCMonth() + 1 !== month ||
    calendar.getUTCDate() !== day ||
    (hour ?? 0) > 23 ||
    (minute ?? 0) > 59 ||
    second > 59
  ) {
    invalid(field, `${input} is not a date-time that exists`);
  }
  const epochMs = Date.parse(input);
  if (Number.isNaN(epochMs) || epochMs < 0) invalid(field, 'is not a valid date-time after 1970');
  return epochMs;
}

/**
 * One v3 record object. `where` prefixes field names, e.g. `entries[2].`; `ignored` is a field
 * of the object that is not the record's (a batch entry's `id`), so the entry is read in place.
 */
export function parseRecord(input: unknown, where = '', ignored?: string): RecordInput {
  return parseRecordParts(input, where, ignored, false) as RecordInput;
}

/** `parseRecord`, with keys and values that ask for a schema pending when `schemas` is true. */
export function parseRecordParts(
  input: unknown,
  where: string,
  ignored: string | undefined,
  schemas: boolean,
): ParsedRecord {
  if (!isPlainObject(input)) invalid(where ? where.slice(0, -1) : 'record', 'must be an object');
  rejectUnknownFields(input, RECORD_FIELDS, where, ignored);
  // Field names for errors are made only where a field is there to be wrong.
  const { partition_id, key, value, headers, timestamp } = input;
  return {
    partition:
      partition_id == null ? undefined : parsePartitionId(partition_id, `${where}partition_id`),
    // An absent or null key/value object means "no key"/"no value" (a Kafka null).
    key: key == null ? undefined : parseDataAt(key, where, 'key', schemas),
    value: value == null ? undefined : parseDataAt(value, where, 'value', schemas),
    headers: headers === undefined ? NO_HEADERS : parseHeaders(headers, `${where}headers`),
    timestamp: timestamp == null ? undefined : parseTimestamp(timestamp, `${where}timestamp`),
  };
}

/** A record, or the 4xx that says what is wrong with it (reported in its place). */
export function parseRecordOrError(
  input: unknown,
  where = '',
  ignored?: string,
): RecordInput | TallyError {
  return parsedRecordOrError(input, where, ignored, false) as RecordInput | TallyError;
}

/** `parseRecordOrError` with schema parts left pending when `schemas` is true. */
export function parsedRecordOrError(
  input: unknown,
  where: string,
  ignored: string | undefined,
  schemas: boolean,
): ParsedRecord | TallyError {
  try {
    return parseRecordParts(input, where, ignored, schemas);
  } catch (error) {
    if (error instanceof TallyError && error.status < 500) return error;
    throw error;
  }
}
