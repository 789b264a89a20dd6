// Confluent's wire format: magic byte 0, the schema id as a 4-byte big-endian integer, then the
// serialized value. Protobuf values carry their message's indexes first (codec `prefix`).
const MAGIC_BYTE = 0;
const HEADER_BYTES = 5;

export function frame(schemaId: number, body: Uint8Array): Buffer {
  const framed = Buffer.alloc(HEADER_BYTES + body.length);
  framed.writeUInt8(MAGIC_BYTE, 0);
  framed.writeInt32BE(schemaId, 1);
  framed.set(body, HEADER_BYTES);
  return framed;
}

/** The schema id and body of a framed value, or undefined for bytes not in the wire format. */
export function unframe(bytes: Uint8Array): { schemaId: number; body: Buffer } | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (buffer.length < HEADER_BYTES || buffer.readUInt8(0) !== MAGIC_BYTE) return undefined;
  return { schemaId: buffer.readInt32BE(1), body: buffer.subarray(HEADER_BYTES) };
}
