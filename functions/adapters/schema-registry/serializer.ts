// Serializes a record's key or value with its schema in Confluent's wire format: the schema is
// resolved by id (and, given a subject, checked to be registered under it, as REST Proxy's
// getSchemaFromSchemaId does), by subject (a version, or the latest), or given inline
// (registered under its subject), the value is checked against it before anything is encoded,
// and what the registry said is cached for the container's life (the latest version of a
// subject for `latestTtlMs`).

import { InvalidInputError } from '../../core/shared/errors.js';
import type { Codec, SchemaType } from './codec.js';
import { compileSchema, encodeOrRefuse } from './compile-schema.js';
import { SchemaNotFoundError, SchemaRefusedError, UnsupportedSchemaError } from './errors.js';
import { remember as rememberFor } from './promise-cache.js';
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
  /** With a subject, the id must be registered under it (42207 at REST Proxy if not). */
  | { readonly kind: 'id'; readonly id: number | string; readonly subject?: InlineSubject }
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
  /** The registry's id: an integer (Confluent's API), a schema version's UUID (Glue). */
  readonly id: number | string;
  /** The subject and the schema's version under it (REST Proxy's report), when known. */
  readonly subject?: string;
  readonly version?: number;
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
  readonly subject?: string;
  readonly version?: number;
}

/** A schema as the registry gave it, compiled. */
interface Known {
  readonly codec: Codec;
  readonly schema: string;
}

export function createSchemaSerializer(options: SchemaSerializerOptions): SchemaSerializer {
  const { registry } = options;
  const now = options.now ?? Date.now;
  const latestTtlMs = options.latestTtlMs ?? 30_000;
  const maxEntries = options.maxEntries ?? 1000;
  const byId = new Map<number, Promise<Known>>();
  const bySubject = new Map<string, { resolved: Promise<Resolved>; until: number }>();
  const inlineCodecs = new Map<string, Codec>();
  const inlineIds = new Map<string, Promise<{ id: number; subject: string; version: number }>>();
  /** `subject\0id` → the id's version under the subject: asked once per container. */
  const versionsUnder = new Map<string, Promise<number>>();

  /** A cached promise, dropped again if it rejects so that the next call asks afresh. */
  function remember<K, V>(cache: Map<K, V>, key: K, value: V, settled: Promise<unknown>): void {
    rememberFor(cache, key, value, settled, maxEntries);
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
    return compileSchema(schema.type, schema.schema, what);
  }

  function knownById(id: number, field: string): Promise<Known> {
    const cached = byId.get(id);
    if (cached) return cached;
    const known = registry
      .schemaById(id, field)
      .then((schema) => ({ codec: compile(schema, `schema ${id}`), schema: schema.schema }));
    remember(byId, id, known, known);
    return known;
  }

  /** The subject the id must be registered under, named as its strategy names it. */
  function subjectOf(subject: InlineSubject, codec: Codec, at: string): string {
    const named =
      typeof subject === 'string'
        ? subject
        : subjectName(subject.strategy, subject.topic, subject.part, codec.recordName);
    if (named === undefined) {
      const field = `${at}.subject_name_strategy`;
      throw new SchemaRefusedError(`${field}: the schema names no record to name a subject by`, {
        field,
      });
    }
    return named;
  }

  /**
   * Refuses an id that is not registered under its subject (REST Proxy: 42207); the subject and
   * the id's version under it otherwise.
   */
  async function checkRegisteredUnder(
    id: number,
    subject: InlineSubject,
    known: Known,
    at: string,
  ): Promise<{ subject: string; version: number }> {
    const named = subjectOf(subject, known.codec, at);
    const key = `${named}\u0000${id}`;
    let version = versionsUnder.get(key);
    if (version === undefined) {
      const field = `${at}.schema_id`;
      version = registry
        .versionUnder(named, known.codec.type, known.schema, field)
        .catch((error: unknown) => {
          if (!(error instanceof SchemaNotFoundError)) throw error;
          throw new SchemaNotFoundError(
            `${field}: schema ${id} is not registered under subject ${named}`,
            { cause: error, field, errorCode: error.errorCode },
          );
        });
      remember(versionsUnder, key, version, version);
    }
    return { subject: named, version: await version };
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
      if (!byId.has(schema.id)) {
        const known = Promise.resolve({ codec, schema: schema.schema });
        remember(byId, schema.id, known, known);
      }
      return {
        id: schema.id,
        codec,
        subject,
        ...(schema.version !== undefined && { version: schema.version }),
      };
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

  /**
   * Registers an inline schema under its subject (once per container); its id, subject and
   * version there (REST Proxy asks for the version after registering too).
   */
  function inlineId(
    reference: Inline,
    codec: Codec,
    at: string,
  ): Promise<{ id: number; subject: string; version: number }> {
    const key = JSON.stringify([reference.type, reference.schema, reference.subject]);
    const cached = inlineIds.get(key);
    if (cached) return cached;
    const subject = subjectOf(reference.subject, codec, at);
    const field = `${at}.schema`;
    const registered = registry
      .register(subject, reference.type, reference.schema, field)
      .then(async (id) => ({
        id,
        subject,
        version: await registry.versionUnder(subject, reference.type, reference.schema, field),
      }));
    remember(inlineIds, key, registered, registered);
    return registered;
  }

  async function resolve(
    reference: Exclude<SchemaReference, Inline>,
    at: string,
  ): Promise<Resolved> {
    if (reference.kind === 'id') {
      if (typeof reference.id === 'string') {
        const field = `${at}.schema_id`;
        throw new InvalidInputError(
          `${field}: this registry's schema ids are integers; a UUID names an AWS Glue schema version (TALLY_SCHEMA_REGISTRY=glue)`,
          { field },
        );
      }
      const known = await knownById(reference.id, `${at}.schema_id`);
      if (reference.subject === undefined) return { id: reference.id, codec: known.codec };
      const under = await checkRegisteredUnder(reference.id, reference.subject, known, at);
      return { id: reference.id, codec: known.codec, ...under };
    }
    return bySubjectVersion(reference.subject, reference.version, `${at}.subject`);
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
      const body = kafkaNull
        ? null
        : encodeOrRefuse(codec, data, at, `the inline ${codec.type} schema`);
      const { id, subject, version } = await inlineId(reference, codec, at);
      return { bytes: body && frame(id, body), type: codec.type, id, subject, version };
    }
    const { id, codec, subject, version } = await resolve(reference, at);
    const bytes = kafkaNull
      ? null
      : frame(id, encodeOrRefuse(codec, data, at, `schema ${id}, ${codec.type}`));
    return {
      bytes,
      type: codec.type,
      id,
      ...(subject !== undefined && { subject }),
      ...(version !== undefined && { version }),
    };
  }

  return {
    async serialize(reference, data, at) {
      return (await encodePart(reference, data, at, false)).bytes as Buffer;
    },
    encode: (reference, data, at) => encodePart(reference, data, at),
  };
}
