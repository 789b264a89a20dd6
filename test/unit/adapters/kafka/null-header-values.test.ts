import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { encodeNullHeaderValues } from '../../../../functions/adapters/kafka/null-header-values.js';
import { NULL_HEADER_VALUE } from '../../../../functions/core/publish/record.js';
import { recordBodyBytesOf } from '../../../../functions/core/publish/record-size.js';

// kafkajs 2.2.4's own record encoder and decoder (recordBatch/record/v0): a header value of
// NULL_HEADER_VALUE goes on the wire as Kafka's null (length -1) and comes back as null, the size
// kafkajs counted for the record is the size it wrote, and an empty value stays empty.

const require = createRequire(import.meta.url);
type Encoded = { buffer: Buffer };
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (
  record: object,
) => Encoded;
const decodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/decoder.js') as (
  decoder: unknown,
  context: object,
) => { headers: Record<string, Buffer | null | Array<Buffer | null>> };
const Decoder = require('kafkajs/src/protocol/decoder.js') as new (
  buffer: Buffer,
) => {
  readVarInt(): number;
};

function roundTrip(headers: Record<string, Buffer | Buffer[]>) {
  const encoded = encodeRecord({ key: null, value: Buffer.from('v'), headers }).buffer;
  const decoder = new Decoder(encoded);
  const length = decoder.readVarInt();
  const decoded = decodeRecord(decoder, { firstOffset: '0', firstTimestamp: '0', magicByte: 2 });
  return { encoded, length, decoded };
}

describe('null header values through kafkajs', () => {
  encodeNullHeaderValues();

  it('writes NULL_HEADER_VALUE as a null that kafkajs reads back as null', () => {
    const { decoded } = roundTrip({ trace: NULL_HEADER_VALUE, empty: Buffer.alloc(0) });
    expect(decoded.headers.trace).toBeNull();
    expect(decoded.headers.empty).toEqual(Buffer.alloc(0));
  });

  it('writes a null among a header name’s several values, in its place', () => {
    const { decoded } = roundTrip({ h: [Buffer.from('a'), NULL_HEADER_VALUE, Buffer.from('b')] });
    expect(decoded.headers.h).toEqual([Buffer.from('a'), null, Buffer.from('b')]);
  });

  it('writes the length it counted, which is the size Tally counts', () => {
    const headers = { trace: NULL_HEADER_VALUE, other: Buffer.from('xyz') };
    const { encoded, length } = roundTrip(headers);
    // The length prefix is one byte here; the body after it is what kafkajs measured.
    expect(encoded.length - 1).toBe(length);
    expect(length).toBe(recordBodyBytesOf(null, Buffer.from('v'), headers) + 2);
  });

  it('changes nothing for key and value bytes', () => {
    const { decoded } = roundTrip({});
    expect(decoded).toMatchObject({ key: null, value: Buffer.from('v') });
  });
});
