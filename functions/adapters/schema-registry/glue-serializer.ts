// Serializes a record's key or value with a schema of an AWS Glue Schema Registry, in Glue's wire
// format, with the same codecs as the Confluent path. The v3 body names the schema as for
// Confluent's API: `subject` (or the subject name strategy) is the Glue schema's name within the
// configured registry; `schema_id` is a schema version's UUID; `schema_version` a version number
// of the schema, none its latest; an inline `schema` is looked up by its definition
// (GetSchemaByDefinition) and registered only when auto-registration is on.
import { InvalidInputError } from '../../core/shared/errors.js';
import type { Codec, SchemaType } from './codec.js';
import { compileSchema, encodeOrRefuse } from './compile-schema.js';
import { SchemaNotFoundError, SchemaRefusedError } from './errors.js';
import type { GlueRegistry } from './glue-registry.js';
import { type GlueCompression, glueFrame } from './glue-wire-format.js';
import { remember } from './promise-cache.js';
import type {
  InlineSubject,
  SchemaReference,
  SchemaSerializer,
  SerializedPart,
} from './serializer.js';
import { subjectName } from './subject-names.js';

export interface GlueSerializerOptions {
  readonly registry: GlueRegistry;
  /** Register an inline schema Glue does not have (TALLY_GLUE_AUTO_REGISTER); off: a 422. */
  readonly autoRegister: boolean;
  readonly compression: GlueCompression;
  /** How long "the latest version of a schema" is trusted (default 30 s). */
  readonly latestTtlMs?: number;
  readonly now?: () => number;
  readonly maxEntries?: number;
}

interface Resolved {
  readonly id: string;
  readonly codec: Codec;
  readonly schemaName: string;
  readonly versionNumber: number | undefined;
}

type Inline = Extract<SchemaReference, { kind: 'inline' }>;

export function createGlueSerializer(options: GlueSerializerOptions): SchemaSerializer {
  const { registry, compression } = options;
  const now = options.now ?? Date.now;
  const latestTtlMs = options.latestTtlMs ?? 30_000;
  const maxEntries = options.maxEntries ?? 1000;
  const byId = new Map<string, Promise<Resolved>>();
  const byName = new Map<string, { resolved: Promise<Resolved>; until: number }>();
  const inlineCodecs = new Map<string, Codec>();
  const inlineIds = new Map<string, Promise<Resolved>>();
  const keep = <K, V>(cache: Map<K, V>, key: K, value: V, settled: Promise<unknown>) =>
    remember(cache, key, value, settled, maxEntries);

  function schemaNameOf(subject: InlineSubject, codec: Codec, at: string): string {
    const named =
      typeof subject === 'string'
        ? subject
        : subjectName(subject.strategy, subject.topic, subject.part, codec.recordName);
    if (named !== undefined) return named;
    const field = `${at}.subject_name_strategy`;
    throw new SchemaRefusedError(`${field}: the schema names no record to name a Glue schema by`, {
      field,
    });
  }

  function versionById(id: string, at: string): Promise<Resolved> {
    const cached = byId.get(id);
    if (cached) return cached;
    const resolved = registry.versionById(id, `${at}.schema_id`).then((version) => ({
      id,
      codec: compileSchema(version.type, version.definition, `schema version ${id}`),
      schemaName: version.schemaName,
      versionNumber: version.versionNumber,
    }));
    keep(byId, id, resolved, resolved);
    return resolved;
  }

  function versionOf(schemaName: string, number: number | 'latest', at: string): Promise<Resolved> {
    const key = `${schemaName}\u0000${number}`;
    const cached = byName.get(key);
    if (cached && cached.until > now()) return cached.resolved;
    const resolved = registry.versionOf(schemaName, number, `${at}.subject`).then((version) => ({
      id: version.schemaVersionId,
      codec: compileSchema(
        version.type,
        version.definition,
        `version ${number} of Glue schema ${schemaName}`,
      ),
      schemaName,
      versionNumber: version.versionNumber,
    }));
    const until = number === 'latest' ? now() + latestTtlMs : Number.POSITIVE_INFINITY;
    keep(byName, key, { resolved, until }, resolved);
    return resolved;
  }

  function inlineCodec(reference: Inline, at: string): Codec {
    const key = `${reference.type}\u0000${reference.schema}`;
    const cached = inlineCodecs.get(key);
    if (cached) return cached;
    const codec = compileSchema(reference.type, reference.schema, `${at}.schema`);
    keep(inlineCodecs, key, codec, Promise.resolve());
    return codec;
  }

  /** The inline schema's version: found by its definition, else registered when allowed. */
  function inlineVersion(reference: Inline, codec: Codec, at: string): Promise<Resolved> {
    const schemaName = schemaNameOf(reference.subject, codec, at);
    const key = JSON.stringify([reference.type, reference.schema, schemaName]);
    const cached = inlineIds.get(key);
    if (cached) return cached;
    const field = `${at}.schema`;
    const resolved = registry.byDefinition(schemaName, reference.schema, field).then(
      (found): Promise<Resolved> | Resolved => {
        if (found.type !== reference.type) {
          throw new SchemaRefusedError(
            `${field}: Glue schema ${schemaName} holds ${found.type} schemas, not ${reference.type}`,
            { field },
          );
        }
        return { id: found.schemaVersionId, codec, schemaName, versionNumber: undefined };
      },
      async (error: unknown) => {
        if (!(error instanceof SchemaNotFoundError)) throw error;
        if (!options.autoRegister) {
          throw new SchemaNotFoundError(
            `${field}: AWS Glue registry ${registry.registryName} has no schema ${schemaName} with this definition, and Tally does not register schemas (TALLY_GLUE_AUTO_REGISTER is off): register it in Glue first, or give schema_id or schema_version`,
            { cause: error, field },
          );
        }
        const registered = await registry.register(
          schemaName,
          reference.type,
          reference.schema,
          field,
        );
        return {
          id: registered.schemaVersionId,
          codec,
          schemaName,
          versionNumber: registered.versionNumber,
        };
      },
    );
    keep(inlineIds, key, resolved, resolved);
    return resolved;
  }

  async function resolve(reference: Exclude<SchemaReference, Inline>, at: string) {
    if (reference.kind === 'subject') return versionOf(reference.subject, reference.version, at);
    const field = `${at}.schema_id`;
    if (typeof reference.id === 'number') {
      throw new InvalidInputError(
        `${field}: AWS Glue names schema versions by UUID (its SchemaVersionId), not by number: give that UUID, or subject with schema_version`,
        { field },
      );
    }
    const resolved = await versionById(reference.id, at);
    // A version belongs to one schema: a subject named with it must be that schema.
    if (typeof reference.subject === 'string' && reference.subject !== resolved.schemaName) {
      throw new SchemaNotFoundError(
        `${field}: schema version ${reference.id} is a version of Glue schema ${resolved.schemaName}, not of ${reference.subject}`,
        { field },
      );
    }
    return resolved;
  }

  async function encodePart(
    reference: SchemaReference,
    data: unknown,
    at: string,
    nullIsKafkaNull: boolean,
  ): Promise<SerializedPart> {
    const kafkaNull = nullIsKafkaNull && data === null;
    let resolved: Resolved;
    let body: Uint8Array | null = null;
    if (reference.kind === 'inline') {
      // Checked before it is looked up or registered: a value that does not match costs no call.
      const codec = inlineCodec(reference, at);
      if (!kafkaNull) body = encodeOrRefuse(codec, data, at, `the inline ${codec.type} schema`);
      resolved = await inlineVersion(reference, codec, at);
    } else {
      resolved = await resolve(reference, at);
      if (!kafkaNull) {
        const type: SchemaType = resolved.codec.type;
        body = encodeOrRefuse(
          resolved.codec,
          data,
          at,
          `Glue schema version ${resolved.id}, ${type}`,
        );
      }
    }
    return {
      bytes: body && glueFrame(resolved.id, body, compression),
      type: resolved.codec.type,
      id: resolved.id,
      subject: resolved.schemaName,
      ...(resolved.versionNumber !== undefined && { version: resolved.versionNumber }),
    };
  }

  return {
    async serialize(reference, data, at) {
      return (await encodePart(reference, data, at, false)).bytes as Buffer;
    },
    encode: (reference, data, at) => encodePart(reference, data, at, true),
  };
}
