// Serializes a record's key or value with its schema in Confluent's wire format: the schema is
// resolved by id, by subject (a version, or the latest), or given inline (registered under its
// subject), the value is checked against it before anything is encoded, and what the registry
// said is cached for the container's life (the latest version of a subject for `latestTtlMs`).
import { avroCodec } from './avro-codec.js';
import { type Codec, compileOrRefuse, type SchemaType } from './codec.js';
import { SchemaRefusedError, SchemaValidationError, UnsupportedSchemaError } from './errors.js';
import { jsonCodec } from './json-codec.js';
import { protobufCodec } from './protobuf-codec.js';
import type { RegisteredSchema, SchemaRegistryClient } from './registry-client.js';
import { type SubjectNameStrategy, subjectName } from './subject-names.js';
import { frame } from './wire-format.js';

export type InlineSubject =
  | string
  | {
      readonly strategy: SubjectNameStrategy;
      readonly topic: string;
      readonly part: 'key' | 'value';
    };

export type SchemaReference =
  | { readonly kind: 'id'; readonly id: number }
  | { readonly kind: 'subject'; readonly subject: string; readonly version: number | 'latest' }
  | {
      readonly kind: 'inline';
      readonly type: SchemaType;
      readonly schema: string;
      readonly subject: InlineSubject;
    };

export interface SchemaSerializer {
  /**
   * The value framed for Kafka. `at` is where the record part sits in the caller's input
   * (`records[2].value`): errors name `<at>.schema_id`, `<at>.data.<path>` and so on.
   */
  serialize(reference: SchemaReference, data: unknown, at: string): Promise<Buffer>;
  /**
   * `serialize`, with the schema's type and id; data null is a Kafka null (bytes null), its
   * schema resolved all the same (an inline one registered), as REST Proxy does.
   */
  encode(reference: SchemaReference, data: unknown, at: string): Promise<SerializedPart>;
}

export interface SerializedPart {
  readonly bytes: Buffer | null;
  readonly type: SchemaType;
  readonly id: number;
}

export interface SchemaSerializerOptions {
  readonly registry: SchemaRegistryClient;
  /** How long "the latest version of a subject" is trusted (default 30 s). */
  readonly latestTtlMs?: number;
  readonly now?: () => number;
  /** Entries per cache before the oldest is forgotten (default 1000). */
  readonly maxEntries?: number;
}

interface Resolved {
  readonly id: number;
  readonly codec: Codec;
}

const COMPILERS: Record<SchemaType, (schema: string) => Codec> = {
  AVRO: avroCodec,
  PROTOBUF: protobufCodec,
  JSON: jsonCodec,
};

export function createSchemaSerializer(options: SchemaSerializerOptions): SchemaSerializer {
  const { registry } = options;
  const now = options.now ?? Date.now;
  const latestTtlMs = options.latestTtlMs ?? 30_000;
  const maxEntries = options.maxEntries ?? 1000;
  const byId = new Map<number, Promise<Codec>>();
  const bySubject = new Map<string, { resolved: Promise<Resolved>; until: number }>();
  const inlineCodecs = new Map<string, Codec>();
  const inlineIds = new Map<string, Promise<number>>();

  /** A cached promise, dropped again if it rejects so that the next call asks afresh. */
  function remember<K, V>(cache: Map<K, V>, key: K, value: V, settled: Promise<unknown>): void {
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as K);
    cache.set(key, value);
    settled.catch(() => {
      if (cache.get(key) === value) cache.delete(key);
    });
  }

  function compile(
    schema: RegisteredSchema | { type: SchemaType; schema: string; hasReferences: false },
    what: string,
  ): Codec {
    if (schema.hasReferences) {
      throw new UnsupportedSchemaError(
        `${what} refers to other schemas, which Tally does not resolve`,
      );
    }
    return compileOrRefuse(schema.type, what, () => COMPILERS[schema.type](schema.schema));
  }

  function codecById(id: number, field: string): Promise<Codec> {
    const cached = byId.get(id);
    if (cached) return cached;
    const codec = registry.schemaById(id, field).then((schema) => compile(schema, `schema ${id}`));
    remember(byId, id, codec, codec);
    return codec;
  }

  function bySubjectVersion(
    subject: string,
    version: number | 'latest',
    field: string,
  ): Promise<Resolved> {
    const key = `${subject}\u0000${version}`;
    const cached = bySubject.get(key);
    if (cached && cached.until > now()) return cached.resolved;
    const resolved = registry.subjectVersion(subject, version, field).then((schema) => {
      const codec = compile(schema, `subject ${subject} version ${version}`);
      if (!byId.has(schema.id))
        remember(byId, schema.id, Promise.resolve(codec), Promise.resolve());
      return { id: schema.id, codec };
    });
    const until = version === 'latest' ? now() + latestTtlMs : Number.POSITIVE_INFINITY;
    remember(bySubject, key, { resolved, until }, resolved);
    return resolved;
  }

  type Inline = Extract<SchemaReference, { kind: 'inline' }>;

  /** An inline schema compiled once per container (compiling is most of its cost). */
  function inlineCodec(reference: Inline, at: string): Codec {
    const key = `${reference.type}\u0000${reference.schema}`;
    const cached = inlineCodecs.get(key);
    if (cached) return cached;
    const codec = compile({ ...reference, hasReferences: false }, `${at}.schema`);
    remember(inlineCodecs, key, codec, Promise.resolve());
    return codec;
  }

  /** Registers an inline schema under its subject (once per container); returns its id. */
  function inlineId(reference: Inline, codec: Codec, at: string): Promise<number> {
    const key = JSON.stringify([reference.type, reference.schema, reference.subject]);
    const cached = inlineIds.get(key);
    if (cached) return cached;
    const subject =
      typeof reference.subject === 'string'
        ? reference.subject
        : subjectName(
            reference.subject.strategy,
            reference.subject.topic,
            reference.subject.part,
            codec.recordName,
          );
    if (subject === undefined) {
      const field = `${at}.subject_name_strategy`;
      throw new SchemaRefusedError(`${field}: the schema names no record to name a subject by`, {
        field,
      });
    }
    const id = registry.register(subject, reference.type, reference.schema, `${at}.schema`);
    remember(inlineIds, key, id, id);
    return id;
  }

  async function resolve(
    reference: Exclude<SchemaReference, Inline>,
    at: string,
  ): Promise<Resolved> {
    if (reference.kind === 'id') {
      return { id: reference.id, codec: await codecById(reference.id, `${at}.schema_id`) };
    }
    return bySubjectVersion(reference.subject, reference.version, `${at}.subject`);
  }

  function encode(codec: Codec, data: unknown, at: string, schema: string): Uint8Array {
    const encoded = codec.encode(data);
    if ('bytes' in encoded) return encoded.bytes;
    const field = encoded.issue.path ? `${at}.data.${encoded.issue.path}` : `${at}.data`;
    throw new SchemaValidationError(`${field} ${encoded.issue.message} (${schema})`, { field });
  }

  async function encodePart(
    reference: SchemaReference,
    data: unknown,
    at: string,
    nullIsKafkaNull = true,
  ): Promise<SerializedPart> {
    const kafkaNull = nullIsKafkaNull && data === null;
    if (reference.kind === 'inline') {
      // Checked before it is registered: a value that does not match registers nothing.
      const codec = inlineCodec(reference, at);
      const body = kafkaNull ? null : encode(codec, data, at, `the inline ${codec.type} schema`);
      const id = await inlineId(reference, codec, at);
      return { bytes: body && frame(id, body), type: codec.type, id };
    }
    const { id, codec } = await resolve(reference, at);
    const bytes = kafkaNull
      ? null
      : frame(id, encode(codec, data, at, `schema ${id}, ${codec.type}`));
    return { bytes, type: codec.type, id };
  }

  return {
    async serialize(reference, data, at) {
      return (await encodePart(reference, data, at, false)).bytes as Buffer;
    },
    encode: (reference, data, at) => encodePart(reference, data, at),
  };
}
