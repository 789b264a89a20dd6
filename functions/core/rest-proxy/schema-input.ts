import type { Buffer } from 'node:buffer';
import {
  type RecordData,
  type RecordInput,
  SCHEMA_DATA_TYPES,
  type SchemaDataType,
} from '../publish/record.js';
import { InvalidInputError, TallyError } from '../shared/errors.js';

// A key or value to be serialized with a schema from the registry (REST Proxy v3's `schema_id`,
// `schema_version`, `subject`, `subject_name_strategy`, `schema` and the types AVRO, PROTOBUF,
// JSONSCHEMA). Parsing is synchronous and yields a pending part; `encodeSchemaParts` serializes
// every pending part through the `SchemaEncoder` port before anything is allocated or sent.
//
// The combinations allowed are REST Proxy's (SchemaManagerImpl.getSchema, kafka-rest): a
// `schema_id` (with a subject or strategy, not with a type, version or schema; the id must be
// registered under that subject, TOPIC_NAME's when none is named); else a `schema_version` of a subject (no type, no schema); else an inline `schema`
// with its `type`; else the latest version of a subject, with no type. The subject is `subject`,
// else the one `subject_name_strategy` names (TOPIC_NAME when neither is given), and only
// TOPIC_NAME names one without the schema in hand. Every refusal is a 400 naming the field.

export const SUBJECT_NAME_STRATEGIES = ['TOPIC_NAME', 'RECORD_NAME', 'TOPIC_RECORD_NAME'] as const;
export type SubjectNameStrategy = (typeof SUBJECT_NAME_STRATEGIES)[number];

/** A subject given by name, or by the strategy that names it from the topic (and schema). */
export type SubjectChoice =
  | { readonly subject: string }
  | { readonly strategy: SubjectNameStrategy };

/** A schema given inline, with its type. */
export interface InlineSchema {
  readonly type: SchemaDataType;
  readonly text: string;
}

/**
 * By id (which must be registered under its subject, as REST Proxy checks); else a version (or
 * the latest) of a subject; else inline, registered under a subject.
 */
export type SchemaChoice =
  | { readonly id: SchemaId; readonly subject: SubjectChoice }
  | { readonly subject: SubjectChoice; readonly version: number | 'latest' }
  | { readonly subject: SubjectChoice; readonly inline: InlineSchema };

/**
 * A registry's id of a schema: an integer (Confluent's API), or a schema version's UUID (AWS Glue
 * Schema Registry, which names versions so).
 */
export type SchemaId = number | string;

/** A key or value waiting for its schema: `field` is where it sits (`entries[2].value`). */
export interface SchemaPart {
  readonly schema: SchemaChoice;
  readonly data: unknown;
  readonly field: string;
  readonly role: 'key' | 'value';
}

/** A record as parsed, whose key or value may still wait for its schema (schema-input.ts). */
export interface ParsedRecord extends Omit<RecordInput, 'key' | 'value'> {
  readonly key: RecordData | SchemaPart | undefined;
  readonly value: RecordData | SchemaPart | undefined;
}

/**
 * What the registry made of a part: its bytes in the wire format (null: Kafka null), type, id,
 * and the subject with the schema's version under it when known (REST Proxy reports both).
 */
export interface EncodedPart {
  readonly bytes: Buffer | null;
  readonly type: SchemaDataType;
  readonly schemaId: SchemaId;
  readonly subject?: string;
  readonly schemaVersion?: number;
}

/** The port: serializes one part for `topic`; rejects with a TallyError naming the field. */
export interface SchemaEncoder {
  encode(part: SchemaPart, topic: string): Promise<EncodedPart>;
}

const SCHEMA_PART_FIELDS: ReadonlySet<string> = new Set([
  'type',
  'data',
  'schema_id',
  'schema_version',
  'subject',
  'subject_name_strategy',
  'schema',
]);
const MAX_SCHEMA_ID = 2 ** 31 - 1;
const SCHEMA_VERSION_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function invalid(field: string, message: string): never {
  throw new InvalidInputError(`${field}: ${message}`, { field });
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: string): T {
  if (!allowed.includes(value as T)) invalid(field, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

function positive(value: unknown, field: string, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    invalid(field, `must be an integer of at least ${min}`);
  }
  if (value > MAX_SCHEMA_ID) invalid(field, `must be at most ${MAX_SCHEMA_ID}`);
  return value;
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) invalid(field, 'must be a non-empty string');
  return value;
}

/** Refuses `name` of `object` when it is there: it does not go with `reason`. */
function without(object: Record<string, unknown>, at: string, name: string, reason: string): void {
  if (object[name] !== undefined && object[name] !== null) {
    invalid(`${at}.${name}`, `does not go with ${reason}`);
  }
}

/**
 * A key's or value's object that asks for a schema (a schema type, no type at all, or a schema
 * field). `at` is its field (`value`, `entries[3].key`). Data null is a Kafka null; its schema
 * is still resolved, as REST Proxy resolves it before serializing.
 */
export function parseSchemaPart(
  input: Record<string, unknown>,
  at: string,
  role: 'key' | 'value',
): SchemaPart {
  for (const name in input) {
    if (!SCHEMA_PART_FIELDS.has(name) && Object.hasOwn(input, name)) {
      invalid(
        `${at}.${/^[\w-]+$/.test(name) ? name : JSON.stringify(name)}`,
        `unknown field (allowed: ${[...SCHEMA_PART_FIELDS].join(', ')})`,
      );
    }
  }
  const given = (name: string) => input[name] !== undefined && input[name] !== null;
  const type = given('type') ? oneOf(input.type, SCHEMA_DATA_TYPES, `${at}.type`) : undefined;
  const subject: SubjectChoice = given('subject')
    ? { subject: text(input.subject, `${at}.subject`) }
    : {
        strategy: given('subject_name_strategy')
          ? oneOf(
              input.subject_name_strategy,
              SUBJECT_NAME_STRATEGIES,
              `${at}.subject_name_strategy`,
            )
          : 'TOPIC_NAME',
      };
  if (given('subject') && given('subject_name_strategy')) {
    // REST Proxy takes the subject and ignores the strategy; checked all the same.
    oneOf(input.subject_name_strategy, SUBJECT_NAME_STRATEGIES, `${at}.subject_name_strategy`);
  }
  let schema: SchemaChoice;
  if (given('schema_id')) {
    for (const name of ['type', 'schema_version', 'schema']) without(input, at, name, 'schema_id');
    const id = input.schema_id;
    schema = {
      id:
        typeof id === 'string' && SCHEMA_VERSION_UUID.test(id)
          ? id
          : positive(id, `${at}.schema_id`, 0),
      subject,
    };
  } else if (given('schema_version')) {
    for (const name of ['type', 'schema']) without(input, at, name, 'schema_version');
    const version = positive(input.schema_version, `${at}.schema_version`, 1);
    schema = { subject: namedWithoutSchema(subject, at), version };
  } else if (given('schema')) {
    if (type === undefined)
      invalid(`${at}.type`, `is required with schema (${SCHEMA_DATA_TYPES.join(', ')})`);
    schema = { subject, inline: { type, text: text(input.schema, `${at}.schema`) } };
  } else {
    if (type !== undefined) {
      invalid(
        `${at}.schema`,
        `is required with type ${type} (or give schema_id, or subject without type)`,
      );
    }
    schema = { subject: namedWithoutSchema(subject, at), version: 'latest' };
  }
  if (!Object.hasOwn(input, 'data')) invalid(`${at}.data`, 'is required (null for a Kafka null)');
  return { schema, data: input.data, field: at, role };
}

/** RECORD_NAME and TOPIC_RECORD_NAME need the schema's record name: not known by version. */
function namedWithoutSchema(subject: SubjectChoice, at: string): SubjectChoice {
  if ('strategy' in subject && subject.strategy !== 'TOPIC_NAME') {
    invalid(
      `${at}.subject_name_strategy`,
      `${subject.strategy} names a subject from the schema: give schema_id or schema, or a subject`,
    );
  }
  return subject;
}

export function isSchemaPart(part: RecordData | SchemaPart | undefined): part is SchemaPart {
  return part !== undefined && 'schema' in part;
}

/**
 * Every record with its schema parts serialized, or the error of the part that could not be:
 * its own entry, nothing sent for it. An error that is not a TallyError is a bug and rejects the
 * whole.
 */
export async function encodeSchemaParts(
  records: ReadonlyArray<ParsedRecord | TallyError>,
  topic: string,
  encoder: () => Promise<SchemaEncoder>,
): Promise<Array<RecordInput | TallyError>> {
  if (
    !records.some(
      (r) => !(r instanceof TallyError) && (isSchemaPart(r.key) || isSchemaPart(r.value)),
    )
  ) {
    return records as Array<RecordInput | TallyError>;
  }
  const port = await encoder();
  const encode = async (part: RecordData | SchemaPart | undefined) => {
    if (!isSchemaPart(part)) return part;
    const { bytes, type, schemaId, subject, schemaVersion } = await port.encode(part, topic);
    return {
      type,
      bytes,
      schemaId,
      ...(subject !== undefined && { subject }),
      ...(schemaVersion !== undefined && { schemaVersion }),
    } satisfies RecordData;
  };
  // In order, one record after another, as REST Proxy serializes them: a record may ask for the
  // latest version of a subject that an earlier record's inline schema registers.
  const encoded: Array<RecordInput | TallyError> = [];
  for (const record of records) {
    if (record instanceof TallyError || !(isSchemaPart(record.key) || isSchemaPart(record.value))) {
      encoded.push(record as RecordInput | TallyError);
      continue;
    }
    try {
      const key = await encode(record.key);
      encoded.push({ ...record, key, value: await encode(record.value) });
    } catch (error) {
      if (!(error instanceof TallyError)) throw error;
      encoded.push(error);
    }
  }
  return encoded;
}
