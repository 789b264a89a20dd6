import { createHash } from 'node:crypto';
import {
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  PayloadTooLargeError,
} from '../shared/errors.js';
import { partitionForKey } from '../shared/murmur2.js';
import type { RecordOutcome } from '../shared/outcomes.js';
import { isInternalTopic, topicNameProblem } from '../shared/topic-names.js';
import type { OutgoingRecord, PublishRequest, TopicDescription } from './ports.js';
import { isNullHeaderValue, type RecordInput } from './record.js';
import { bodyBytes, headerBytes, headerNameBytes, singleRecordBatchOf } from './record-size.js';

// Planning a publish: which topics and records are acceptable, where each record goes, what it
// carries, and what identifies the request for its Idempotency-Key.

export interface PlannedRecord {
  readonly input: RecordInput;
  readonly seq: number;
  readonly partition: number;
  readonly timestamp: number;
  /** The outcome of an earlier attempt that a retry keeps instead of sending again. */
  readonly kept: RecordOutcome | undefined;
  /**
   * An earlier attempt's UNKNOWN: that copy may be in the log, so a resend that is not ACKED
   * leaves the record UNKNOWN (for the audit to settle), never "not written".
   */
  readonly mayHaveLanded?: RecordOutcome;
}

/**
 * Keyless records go to partitions in blocks of this many consecutive seqs. A request of up to
 * 100 records (most of them) stays on one or two partitions, so one or two record batches, which
 * is what batching is for; a request at the default entry limit (1,000) spans 10 or 11 blocks,
 * so it reaches up to 11 partitions and a partition takes about 1/partitions of it. Much smaller
 * blocks would cut a request into many small batches and round trips; much larger ones would put
 * a big request back on one partition.
 */
export const KEYLESS_SEQ_BLOCK = 100;

/** Room for the `tally.session` value the sender stamps (its ids are 14 bytes today). */
export const SESSION_ID_MAX_BYTES = 32;

/** The largest seq stamped: a stream's counter stays a safe integer. */
const WIDEST_SEQ = Number.MAX_SAFE_INTEGER;

// The tally.* header names are a public contract (the audit and receipts read them).
export const STREAM_HEADER = 'tally.stream';
export const SEQ_HEADER = 'tally.seq';
const KEY_HEADER = 'tally.idempotency-key';
export const SESSION_HEADER = 'tally.session';

export function checkTopic(topic: string, allowTopic: (topic: string) => boolean): void {
  const problem = topicNameProblem(topic);
  if (problem) throw new InvalidInputError(`topic_name: ${problem}`, { field: 'topic_name' });
  if (isInternalTopic(topic)) {
    throw new ForbiddenError(`topic_name: ${topic} is an internal Kafka topic`, {
      field: 'topic_name',
    });
  }
  if (!allowTopic(topic)) {
    throw new ForbiddenError(`topic_name: ${topic} is not in this API's topic allow-list`, {
      field: 'topic_name',
    });
  }
}

export function checkRecord(
  record: RecordInput,
  topic: TopicDescription,
  index: number,
  request: StampSource,
) {
  if (record.partition !== undefined && record.partition >= topic.partitions) {
    return new NotFoundError(
      `partition_id: partition ${record.partition} does not exist (the topic has ${topic.partitions})`,
      { field: 'partition_id', errorCode: 40402 },
    );
  }
  // Sized as it will be sent alone: stamped (the widest seq, a session id of the most bytes)
  // and in a record batch of its own. The sender never puts it with others if that would not fit.
  let headersBytes = stampBytesOf(request);
  for (const { name, value } of record.headers) {
    headersBytes += headerBytes(headerNameBytes(name), value.length);
  }
  const stamped = request.idempotencyKey === undefined ? 3 : 4;
  const size = singleRecordBatchOf(
    bodyBytes(
      record.key?.bytes ?? null,
      record.value?.bytes ?? null,
      record.headers.length + stamped,
      headersBytes,
    ),
  );
  if (size > topic.maxMessageBytes) {
    return new PayloadTooLargeError(
      `record ${index}: ${size} bytes as a record batch with Tally's headers; the topic accepts at most ${topic.maxMessageBytes} (max.message.bytes)`,
      { field: 'value' },
    );
  }
  return record;
}

/**
 * Identifies a request's content, so an Idempotency-Key cannot be reused for other records: the
 * sha256 of the request's topic and stream, then of each record as the JSON text of
 * `[partition, key type, key base64, value type, value base64, [[name, base64]...], timestamp]`
 * (nulls for what is absent). Keys store it, so the text must stay exactly that: each record's is
 * written directly (base64 needs no escaping) instead of building the array for JSON.stringify,
 * which makes the same text (a unit test holds them equal).
 */
export function fingerprint(request: PublishRequest): string {
  const hash = createHash('sha256').update(JSON.stringify([request.topic, request.stream]));
  for (const record of request.records) {
    if (!('headers' in record)) continue;
    const headers =
      record.headers.length === 0
        ? '[]'
        : JSON.stringify(
            record.headers.map((h) => [
              h.name,
              isNullHeaderValue(h.value) ? null : h.value.toString('base64'),
            ]),
          );
    hash.update(
      `[${jsonNumber(record.partition)},${dataJson(record.key)},${dataJson(record.value)},${headers},${jsonNumber(record.timestamp)}]`,
    );
  }
  return hash.digest('base64url');
}

/** A number (or its absence) as JSON.stringify writes it in an array. */
function jsonNumber(n: number | undefined): string {
  return n !== undefined && Number.isFinite(n) ? String(n) : 'null';
}

/** A key or value as `type,base64` of the fingerprint's JSON text (`null,null` when absent). */
function dataJson(data: RecordInput['key']): string {
  if (data === undefined) return 'null,null';
  const type = data.type === undefined || data.type === null ? 'null' : JSON.stringify(data.type);
  return `${type},${data.bytes ? `"${data.bytes.toString('base64')}"` : 'null'}`;
}

export function choosePartition(record: RecordInput, topic: TopicDescription, seq: number): number {
  if (record.partition !== undefined) return record.partition;
  const key = record.key?.bytes;
  if (key) return partitionForKey(key, topic.partitions);
  // A function of the seq alone: a retry with the same Idempotency-Key (the same seqs) sends
  // every keyless record to the partition its first attempt chose.
  return Math.floor((seq - 1) / KEYLESS_SEQ_BLOCK) % topic.partitions;
}

/** What of a request is stamped on each of its records. */
export type StampSource = Pick<PublishRequest, 'stream' | 'idempotencyKey'>;

/** `stampBytes` of each request, measured once for all its records. */
const stampSizes = new WeakMap<StampSource, number>();

function stampBytesOf(request: StampSource): number {
  let bytes = stampSizes.get(request);
  if (bytes === undefined) {
    bytes = stampBytes(request);
    stampSizes.set(request, bytes);
  }
  return bytes;
}

/**
 * The bytes of Tally's headers at their widest: the seq of the most digits and a session id of
 * the most bytes (`SESSION_ID_MAX_BYTES`).
 */
function stampBytes(request: StampSource): number {
  // The names are ASCII: their length is their size.
  return (
    headerBytes(STREAM_HEADER.length, Buffer.byteLength(request.stream)) +
    headerBytes(SEQ_HEADER.length, String(WIDEST_SEQ).length) +
    (request.idempotencyKey === undefined
      ? 0
      : headerBytes(KEY_HEADER.length, Buffer.byteLength(request.idempotencyKey))) +
    headerBytes(SESSION_HEADER.length, SESSION_ID_MAX_BYTES)
  );
}

/** The record's own headers plus Tally's identity (the sender adds `tally.session`). */
export function stamp(
  record: RecordInput,
  request: StampSource,
  seq: number,
): OutgoingRecord['headers'] {
  const headers: Record<string, Buffer | Buffer[]> = {};
  for (const { name, value } of record.headers) {
    // Own properties only: a header named `constructor` or `__proto__` is a header like any
    // other (read through the prototype, `constructor` went out with Object's source as a value
    // and `__proto__` replaced the prototype, so it was lost).
    const existing = Object.hasOwn(headers, name) ? headers[name] : undefined;
    const values =
      existing === undefined
        ? value
        : Array.isArray(existing)
          ? [...existing, value]
          : [existing, value];
    if (name === '__proto__') {
      Object.defineProperty(headers, name, {
        value: values,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else headers[name] = values;
  }
  // Every record of a request carries the same stream and key: their bytes are made once and
  // shared (kafkajs only reads them). A seq's digits are ASCII: latin1 writes the same bytes
  // without measuring them as UTF-8 first.
  headers[STREAM_HEADER] = sharedBytes(request.stream);
  headers[SEQ_HEADER] = Buffer.from(String(seq), 'latin1');
  if (request.idempotencyKey !== undefined) {
    headers[KEY_HEADER] = sharedBytes(request.idempotencyKey);
  }
  return headers;
}

/** Header values repeated on every record (streams, keys), as UTF-8; a few hundred at most. */
const shared = new Map<string, Buffer>();

export function sharedBytes(text: string): Buffer {
  let bytes = shared.get(text);
  if (bytes === undefined) {
    if (shared.size >= 256) shared.clear();
    bytes = Buffer.from(text, 'utf8');
    shared.set(text, bytes);
  }
  return bytes;
}
