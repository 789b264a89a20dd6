import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { avroCodec } from '../../../../functions/adapters/schema-registry/avro-codec.js';
import {
  glueFrame,
  glueUnframe,
} from '../../../../functions/adapters/schema-registry/glue-wire-format.js';
import { jsonCodec } from '../../../../functions/adapters/schema-registry/json-codec.js';
import { protobufCodec } from '../../../../functions/adapters/schema-registry/protobuf-codec.js';
import { ORDER_AVRO, ORDER_JSON, order } from '../../../fixtures/glue-order-schemas.js';
import { decodeGlueValue, readGlueHeader } from '../../../helpers/glue-decoder.js';

// Glue's wire format (aws-glue-schema-registry SerializationDataEncoder): header version 3,
// compression byte (0 none, 5 zlib), the schema version UUID in 16 bytes, then the payload. Each
// frame is read back by the test's own header reader and @aws-lambda-powertools/kafka's decoders.

const ORDER_PROTO =
  'syntax = "proto3";\npackage tally.glue;\nmessage Order {\n  string id = 1;\n  int32 quantity = 2;\n}\nmessage Other {\n  string note = 1;\n}\n';

function body(codec: ReturnType<typeof avroCodec>, value: unknown): Uint8Array {
  const encoded = codec.encode(value);
  if (!('bytes' in encoded)) throw new Error(encoded.issue.message);
  return encoded.bytes;
}

describe('Glue wire format', () => {
  it('writes header version 3, compression 0 and the schema version UUID, then the payload', () => {
    const id = randomUUID();
    const payload = Uint8Array.of(1, 2, 3);
    const framed = glueFrame(id, payload);
    expect(framed.length).toBe(21);
    const header = readGlueHeader(framed);
    expect(header).toMatchObject({ headerVersion: 3, compression: 0, schemaVersionId: id });
    expect([...header.payload]).toEqual([1, 2, 3]);
    expect(glueUnframe(framed)).toEqual({
      schemaVersionId: id,
      compression: 'none',
      body: Buffer.from(payload),
    });
  });

  it('zlib-compresses the payload with compression byte 5', () => {
    const id = randomUUID();
    const payload = Buffer.from('a'.repeat(1000));
    const framed = glueFrame(id, payload, 'zlib');
    expect(framed[1]).toBe(5);
    expect(framed.length).toBeLessThan(100);
    expect(readGlueHeader(framed).payload.equals(payload)).toBe(true);
    expect(glueUnframe(framed)?.body.equals(payload)).toBe(true);
  });

  it('refuses an id that is not a lower-case UUID, and reads no other format as its own', () => {
    expect(() => glueFrame('1234', Uint8Array.of(1))).toThrow(/UUID/);
    expect(glueUnframe(Buffer.from([0, 0, 0, 0, 1, 2]))).toBeUndefined();
    expect(glueUnframe(Buffer.alloc(18, 0))).toBeUndefined();
  });

  it.each([
    ['AVRO', ORDER_AVRO, avroCodec],
    ['PROTOBUF', ORDER_PROTO, protobufCodec],
    ['JSON', ORDER_JSON, jsonCodec],
  ] as const)(
    'round-trips %s through Powertools, plain and zlib',
    async (format, schema, codec) => {
      const encoded = body(codec(schema), order);
      for (const compression of ['none', 'zlib'] as const) {
        const framed = glueFrame(randomUUID(), encoded, compression);
        expect(await decodeGlueValue(framed, format, schema)).toEqual(order);
      }
    },
  );
});
