import { deflateSync, inflateSync } from 'node:zlib';

// AWS Glue Schema Registry's wire format, as its serializers write it (aws-glue-schema-registry,
// SerializationDataEncoder): byte 0 the header version 3, byte 1 the compression (0 none, 5 zlib),
// bytes 2–17 the schema version's UUID (most significant 8 bytes first), then the encoded value,
// zlib-deflated when byte 1 says so. A Protobuf value starts with its message's index in the
// file as a varint (0: the first message, the one Tally's codec writes), as Confluent's does.
const HEADER_VERSION = 3;
const HEADER_BYTES = 18;
export const GLUE_COMPRESSION = { none: 0, zlib: 5 } as const;
export type GlueCompression = keyof typeof GLUE_COMPRESSION;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isSchemaVersionId(text: string): boolean {
  return UUID.test(text);
}

export function glueFrame(
  schemaVersionId: string,
  body: Uint8Array,
  compression: GlueCompression = 'none',
): Buffer {
  if (!isSchemaVersionId(schemaVersionId)) {
    throw new Error(`not a schema version id (a lower-case UUID): ${schemaVersionId}`);
  }
  const payload = compression === 'zlib' ? deflateSync(body) : body;
  const framed = Buffer.alloc(HEADER_BYTES + payload.length);
  framed.writeUInt8(HEADER_VERSION, 0);
  framed.writeUInt8(GLUE_COMPRESSION[compression], 1);
  framed.write(schemaVersionId.replaceAll('-', ''), 2, 16, 'hex');
  framed.set(payload, HEADER_BYTES);
  return framed;
}

/** The schema version id and (inflated) body of a framed value; undefined if not Glue's format. */
export function glueUnframe(
  bytes: Uint8Array,
): { schemaVersionId: string; compression: GlueCompression; body: Buffer } | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (buffer.length < HEADER_BYTES || buffer.readUInt8(0) !== HEADER_VERSION) return undefined;
  const byte = buffer.readUInt8(1);
  const compression = byte === GLUE_COMPRESSION.zlib ? 'zlib' : byte === 0 ? 'none' : undefined;
  if (compression === undefined) return undefined;
  const hex = buffer.toString('hex', 2, HEADER_BYTES);
  const schemaVersionId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  const payload = buffer.subarray(HEADER_BYTES);
  return {
    schemaVersionId,
    compression,
    body: compression === 'zlib' ? inflateSync(payload) : payload,
  };
}
