import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeNullHeaderValues } from '../../../../functions/adapters/kafka/null-header-values.js';
import { NULL_HEADER_VALUE } from '../../../../functions/core/publish/record.js';

// patches/kafkajs+2.2.4.patch: kafkajs's record encoder (recordBatch/record/v0) writes a record's
// headers straight into the record's own buffer instead of into a 512-byte Encoder of their own
// each. The bytes must be exactly what kafkajs 2.2.4 wrote: its algorithm is kept below as the
// reference (built from its own Header encoder and Encoder, which the patch leaves alone).

const require = createRequire(import.meta.url);
interface Encoder {
  readonly buffer: Buffer;
  writeVarInt(value: number): Encoder;
  writeInt8(value: number): Encoder;
  writeVarLong(value: number): Encoder;
  writeVarIntBytes(value: unknown): Encoder;
  writeVarIntArray(values: Encoder[]): Encoder;
}
const Encoder = require('kafkajs/src/protocol/encoder.js') as {
  new (): Encoder;
  sizeOfVarInt(value: number): number;
  sizeOfVarLong(value: number): number;
  sizeOfVarIntBytes(value: unknown): number;
};
const encodeHeader = require('kafkajs/src/protocol/recordBatch/header/v0/index.js') as (header: {
  key: string;
  value: unknown;
}) => Encoder;
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (
  record: Record<string, unknown>,
) => Encoder;

type Headers = Record<string, Buffer | Buffer[]>;
interface Case {
  key: Buffer | string | null;
  value: Buffer | string | null;
  headers?: Headers;
  offsetDelta?: number;
  timestampDelta?: number;
}

/** kafkajs 2.2.4's record/v0 encoder as published, before the patch. */
function unpatched({ key, value, headers = {}, offsetDelta = 0, timestampDelta = 0 }: Case) {
  const headersArray = Object.keys(headers).flatMap((name) => {
    const values = headers[name] as Buffer | Buffer[];
    return Array.isArray(values)
      ? values.map((one) => ({ key: name, value: one }))
      : [{ key: name, value: values }];
  });
  let headersSize = Encoder.sizeOfVarInt(headersArray.length);
  for (const header of headersArray) {
    const keySize = Buffer.byteLength(header.key);
    const valueSize = Buffer.byteLength(header.value);
    headersSize += Encoder.sizeOfVarInt(keySize) + keySize;
    headersSize += Encoder.sizeOfVarInt(valueSize) + valueSize;
  }
  const sizeOfBody =
    1 +
    Encoder.sizeOfVarLong(timestampDelta) +
    Encoder.sizeOfVarInt(offsetDelta) +
    Encoder.sizeOfVarIntBytes(key) +
    Encoder.sizeOfVarIntBytes(value) +
    headersSize;
  return new Encoder()
    .writeVarInt(sizeOfBody)
    .writeInt8(0)
    .writeVarLong(timestampDelta)
    .writeVarInt(offsetDelta)
    .writeVarIntBytes(key)
    .writeVarIntBytes(value)
    .writeVarIntArray(headersArray.map(encodeHeader)).buffer;
}

const tally: Headers = {
  'tally.stream': Buffer.from('orders'),
  'tally.seq': Buffer.from('9007199254740991'),
  'tally.session': Buffer.from('s-AbCdEfGhIjKl'),
};

const CASES: Record<string, Case> = {
  'no headers': { key: Buffer.from('k'), value: Buffer.alloc(100, 1) },
  'no key, no value, empty headers': { key: null, value: null, headers: {} },
  "Tally's three headers": {
    key: Buffer.from('k-1'),
    value: Buffer.alloc(1024, 2),
    headers: tally,
  },
  'several values under one name, a non-ASCII name, an empty value': {
    key: 'a string key',
    value: 'ü',
    headers: { naïve: [Buffer.from('a'), Buffer.from('bb')], empty: Buffer.alloc(0), ...tally },
    offsetDelta: 999,
    timestampDelta: 123_456_789,
  },
  'a null header value (NULL_HEADER_VALUE)': {
    key: null,
    value: Buffer.from('v'),
    headers: { trace: NULL_HEADER_VALUE, h: [Buffer.from('x'), NULL_HEADER_VALUE] },
  },
};

afterEach(() => vi.restoreAllMocks());

describe('kafkajs record encoder, patched', () => {
  encodeNullHeaderValues();

  for (const [name, record] of Object.entries(CASES)) {
    it(`writes the bytes kafkajs 2.2.4 wrote: ${name}`, () => {
      expect(encodeRecord({ ...record }).buffer).toEqual(unpatched(record));
    });
  }

  it('allocates one buffer per record, however many headers it has', () => {
    const alloc = vi.spyOn(Buffer, 'alloc');
    encodeRecord({ key: Buffer.from('k'), value: Buffer.from('v'), headers: tally });
    // Unpatched: one for the record and one per header (4 here).
    expect(alloc).toHaveBeenCalledTimes(1);
  });

  it('still refuses a header value of null, as kafkajs did (Tally sends NULL_HEADER_VALUE)', () => {
    const record = { key: null, value: null, headers: { h: null } };
    expect(() => encodeRecord(record)).toThrow(TypeError);
  });
});
