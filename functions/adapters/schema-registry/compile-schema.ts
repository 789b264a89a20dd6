import { avroCodec } from './avro-codec.js';
import { type Codec, compileOrRefuse, type SchemaType } from './codec.js';
import { SchemaValidationError } from './errors.js';
import { jsonCodec } from './json-codec.js';
import { protobufCodec } from './protobuf-codec.js';

// The codecs every registry's serializer shares (Confluent's API and Glue's): a registry gives
// the schema's type and text, the codec checks and encodes values by it.
const COMPILERS: Record<SchemaType, (schema: string) => Codec> = {
  AVRO: avroCodec,
  PROTOBUF: protobufCodec,
  JSON: jsonCodec,
};

/** The schema compiled, or an UnsupportedSchemaError naming `what` and why. */
export function compileSchema(type: SchemaType, schema: string, what: string): Codec {
  return compileOrRefuse(type, what, () => COMPILERS[type](schema));
}

/**
 * The value's bytes by its codec, or a SchemaValidationError naming the first mismatch's field
 * under `at` (`records[2].value.data.lines[0].sku`) and `schema` (which schema refused it).
 */
export function encodeOrRefuse(
  codec: Codec,
  data: unknown,
  at: string,
  schema: string,
): Uint8Array {
  const encoded = codec.encode(data);
  if ('bytes' in encoded) return encoded.bytes;
  const field = encoded.issue.path ? `${at}.data.${encoded.issue.path}` : `${at}.data`;
  throw new SchemaValidationError(`${field} ${encoded.issue.message} (${schema})`, { field });
}
