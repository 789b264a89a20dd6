// Sizes in Kafka's record batch format (magic 2) as kafkajs encodes it
// (kafkajs/src/protocol/recordBatch and requests/produce/v3): the broker compares a topic's
// max.message.bytes with the whole batch, its header included, so publish plans and splits with
// these numbers rather than with the payload alone.

/**
 * The batch header: base offset 8, length 4, leader epoch 4, magic 1, CRC 4, attributes 2,
 * last offset delta 4, first and max timestamp 8 + 8, producer id 8, epoch 2, base sequence 4,
 * record count 4.
 */
export const RECORD_BATCH_OVERHEAD = 61;

/** What a record carries on the wire, as kafkajs takes it. */
export interface SizedRecord {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, Buffer | readonly Buffer[]>>;
}

/** Bytes of a zigzag varint (Kafka's varint and varlong), exact up to 2^52. */
export function varintBytes(value: number): number {
  let zigzag = value >= 0 ? value * 2 : -value * 2 - 1;
  let bytes = 1;
  while (zigzag >= 128) {
    zigzag = Math.floor(zigzag / 128);
    bytes++;
  }
  return bytes;
}

const lengthPrefixed = (data: Buffer | null) =>
  data === null ? varintBytes(-1) : varintBytes(data.length) + data.length;

/** Header names repeat on every record (Tally's four, a client's few): their sizes, cached. */
const nameSizes = new Map<string, number>();

/** A header name's UTF-8 bytes, measured once per name (a few hundred names at most). */
export function headerNameBytes(name: string): number {
  let bytes = nameSizes.get(name);
  if (bytes === undefined) {
    if (nameSizes.size >= 256) nameSizes.clear();
    bytes = Buffer.byteLength(name);
    nameSizes.set(name, bytes);
  }
  return bytes;
}

/** One header as written: its name and its value, each after its varint length. */
export function headerBytes(nameBytes: number, valueBytes: number): number {
  return varintBytes(nameBytes) + nameBytes + varintBytes(valueBytes) + valueBytes;
}

/**
 * A record's bytes that do not depend on its place in a batch, from its parts: attributes, key,
 * value, and `headers` header values taking `headerBytes` in all (each as `headerBytes` counts).
 */
export function bodyBytes(
  key: Buffer | null,
  value: Buffer | null,
  headers: number,
  headersBytes: number,
): number {
  return 1 + lengthPrefixed(key) + lengthPrefixed(value) + headersBytes + varintBytes(headers);
}

/**
 * A record's bytes that do not depend on its place in a batch: attributes, key, value and
 * headers (a header with several values is written once per value).
 */
export function recordBodyBytes(record: SizedRecord): number {
  return recordBodyBytesOf(record.key, record.value, record.headers);
}

/** `recordBodyBytes` of a record's parts, for a caller that has no record object. */
export function recordBodyBytesOf(
  key: Buffer | null,
  value: Buffer | null,
  headers: SizedRecord['headers'],
): number {
  let bytes = 0;
  let count = 0;
  for (const name in headers) {
    const values = headers[name] as Buffer | readonly Buffer[];
    const nameBytes = headerNameBytes(name);
    if (Buffer.isBuffer(values)) {
      bytes += headerBytes(nameBytes, values.length);
      count++;
      continue;
    }
    for (const value of values) {
      bytes += headerBytes(nameBytes, value.length);
      count++;
    }
  }
  return bodyBytes(key, value, count, bytes);
}

/** The whole record: length prefix, body, and its offset and timestamp deltas in the batch. */
export function recordBytes(
  body: number,
  offsetDelta: number,
  timestampDeltaBytes: number,
): number {
  const size = body + varintBytes(offsetDelta) + timestampDeltaBytes;
  return varintBytes(size) + size;
}

/** A batch holding only this record: what a record alone must fit into. */
export function singleRecordBatchBytes(record: SizedRecord): number {
  return singleRecordBatchOf(recordBodyBytes(record));
}

/** A batch holding only a record of this body (`recordBodyBytes`). */
export function singleRecordBatchOf(body: number): number {
  return RECORD_BATCH_OVERHEAD + recordBytes(body, 0, varintBytes(0));
}
