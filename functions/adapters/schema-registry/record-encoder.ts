// The publish core's SchemaEncoder port over the serializer: a record's pending key or value
// (core/rest-proxy/schema-input.ts) becomes its bytes in the wire format, and what went wrong becomes the
// error REST Proxy answers for it (kafka-rest SchemaManagerImpl, SchemaRecordSerializerImpl,
// Errors): a value its schema refuses is 400; a schema id or subject the registry does not have,
// an id not registered under its subject, or an inline schema it will not register, is 42207
// ("Error serializing message", 422); a version the subject does not have is 400; an inline
// schema that does not parse is 42205. A registry that does not answer stays a retriable 503
// (REST Proxy: 42207), nothing sent.

import type { SchemaDataType } from '../../core/publish/record.js';
import type { EncodedPart, SchemaEncoder, SchemaPart } from '../../core/rest-proxy/schema-input.js';
import {
  InvalidInputError,
  type TallyError,
  UnprocessableInputError,
} from '../../core/shared/errors.js';
import type { SchemaType } from './codec.js';
import {
  SchemaNotFoundError,
  SchemaRefusedError,
  SchemaValidationError,
  UnsupportedSchemaError,
} from './errors.js';
import { createGlueRegistry, type GlueRegistryOptions } from './glue-registry.js';
import { createGlueSerializer, type GlueSerializerOptions } from './glue-serializer.js';
import { createSchemaRegistryClient, type SchemaRegistryClientOptions } from './registry-client.js';
import {
  createSchemaSerializer,
  type InlineSubject,
  type SchemaReference,
  type SchemaSerializer,
} from './serializer.js';

/** REST Proxy's code for a schema it could not find or register (Errors.messageSerializationException). */
export const SERIALIZATION_ERROR_CODE = 42207;
/** REST Proxy's code for a schema that does not parse (Errors.invalidSchemaException). */
export const INVALID_SCHEMA_ERROR_CODE = 42205;

const REGISTRY_TYPE: Record<SchemaDataType, SchemaType> = {
  AVRO: 'AVRO',
  PROTOBUF: 'PROTOBUF',
  JSONSCHEMA: 'JSON',
};
const REST_PROXY_TYPE: Record<SchemaType, SchemaDataType> = {
  AVRO: 'AVRO',
  PROTOBUF: 'PROTOBUF',
  JSON: 'JSONSCHEMA',
};

export function referenceOf(part: SchemaPart, topic: string): SchemaReference {
  const { schema, role } = part;
  const subject: InlineSubject =
    'subject' in schema.subject
      ? schema.subject.subject
      : { strategy: schema.subject.strategy, topic, part: role };
  if ('id' in schema) return { kind: 'id', id: schema.id, subject };
  if ('version' in schema) {
    // Only TOPIC_NAME reaches here without a subject (the parser refuses the others).
    const named = typeof subject === 'string' ? subject : `${topic}-${role}`;
    return { kind: 'subject', subject: named, version: schema.version };
  }
  return {
    kind: 'inline',
    type: REGISTRY_TYPE[schema.inline.type],
    schema: schema.inline.text,
    subject,
  };
}

function restProxyError(error: unknown, part: SchemaPart): unknown {
  if (error instanceof SchemaValidationError) return error;
  const options = (err: TallyError, errorCode: number) => ({
    cause: err,
    field: err.field ?? part.field,
    errorCode,
  });
  if (error instanceof SchemaNotFoundError) {
    if ('version' in part.schema && part.schema.version !== 'latest') {
      return new InvalidInputError(error.message, options(error, 400));
    }
    return new UnprocessableInputError(error.message, options(error, SERIALIZATION_ERROR_CODE));
  }
  if (error instanceof UnsupportedSchemaError) {
    const field = 'inline' in part.schema ? `${part.field}.schema` : part.field;
    return new UnprocessableInputError(error.message, {
      ...options(error, INVALID_SCHEMA_ERROR_CODE),
      field,
    });
  }
  if (error instanceof SchemaRefusedError) {
    return new UnprocessableInputError(error.message, options(error, SERIALIZATION_ERROR_CODE));
  }
  return error;
}

export function createRecordEncoder(serializer: SchemaSerializer): SchemaEncoder {
  return {
    async encode(part, topic): Promise<EncodedPart> {
      try {
        const { bytes, type, id, subject, version } = await serializer.encode(
          referenceOf(part, topic),
          part.data,
          part.field,
        );
        return {
          bytes,
          type: REST_PROXY_TYPE[type],
          schemaId: id,
          ...(subject !== undefined && { subject }),
          ...(version !== undefined && { schemaVersion: version }),
        };
      } catch (error) {
        throw restProxyError(error, part);
      }
    },
  };
}

/**
 * The encoder over a registry at `url`: one registry client and one serializer (its caches) per
 * call, so per container. Imported dynamically by the publish functions: the codecs (avsc,
 * protobufjs, ajv) load on the first schema record, never at cold start.
 */
export function createRegistryEncoder(options: SchemaRegistryClientOptions): SchemaEncoder {
  return createRecordEncoder(
    createSchemaSerializer({ registry: createSchemaRegistryClient(options) }),
  );
}

/**
 * The encoder over an AWS Glue Schema Registry (Glue's wire format): one SDK client, loaded by
 * the first record, and one serializer (its caches) per call, so per container.
 */
export function createGlueEncoder(
  options: GlueRegistryOptions & Pick<GlueSerializerOptions, 'autoRegister' | 'compression'>,
): SchemaEncoder {
  const { autoRegister, compression, ...registry } = options;
  return createRecordEncoder(
    createGlueSerializer({ registry: createGlueRegistry(registry), autoRegister, compression }),
  );
}
