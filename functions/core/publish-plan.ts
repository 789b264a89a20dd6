import { createHash } from 'node:crypto';
import {
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  PayloadTooLargeError,
} from './errors.js';
import { partitionForKey } from './murmur2.js';
import type { RecordOutcome } from './outcomes.js';
import type { PublishRequest } from './publish.js';
import type { OutgoingRecord, TopicDescription } from './publish-ports.js';
import { estimatedRecordBytes, type RecordInput } from './record-input.js';
import { isInternalTopic, topicNameProblem } from './topic-names.js';

// Planning a publish: which topics and records are acceptable, where each record goes, what it
// carries, and what identifies the request for its Idempotency-Key.

export interface PlannedRecord {
  readonly input: RecordInput;
  readonly seq: number;
  readonly partition: number;
  readonly timestamp: number;
  /** The outcome of an earlier attempt that a retry keeps instead of sending again. */
  readonly kept: RecordOutcome | undefined;
}

/** Room kept for the `tally.*` headers stamped on every record. */
const STAMP_BYTES = 160;

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

export function checkRecord(record: RecordInput, topic: TopicDescription, index: number) {
  if (record.partition !== undefined && record.partition >= topic.partitions) {
    return new NotFoundError(
      `partition_id: partition ${record.partition} does not exist (the topic has ${topic.partitions})`,
      { field: 'partition_id', errorCode: 40402 },
    );
  }
  const size = estimatedRecordBytes(record) + STAMP_BYTES;
  if (size > topic.maxMessageBytes) {
    return new PayloadTooLargeError(
      `record ${index}: about ${size} bytes; the topic accepts at most ${topic.maxMessageBytes} (max.message.bytes)`,
      { field: 'value' },
    );
  }
  return record;
}

/** Identifies a request's content, so an Idempotency-Key cannot be reused for other records. */
export function fingerprint(request: PublishRequest): string {
  const hash = createHash('sha256').update(JSON.stringify([request.topic, request.stream]));
  for (const record of request.records) {
    if (!('headers' in record)) continue;
    hash.update(
      JSON.stringify([
        record.partition ?? null,
        record.key?.type ?? null,
        record.key?.bytes?.toString('base64') ?? null,
        record.value?.type ?? null,
        record.value?.bytes?.toString('base64') ?? null,
        record.headers.map((h) => [h.name, h.value?.toString('base64') ?? null]),
        record.timestamp ?? null,
      ]),
    );
  }
  return hash.digest('base64url');
}

export function choosePartition(
  record: RecordInput,
  topic: TopicDescription,
  firstSeq: number,
): number {
  if (record.partition !== undefined) return record.partition;
  const key = record.key?.bytes;
  if (key) return partitionForKey(key, topic.partitions);
  // Keyless records of one request share a partition derived from their seqs, so a retry with
  // the same Idempotency-Key sends them to the same place.
  return firstSeq % topic.partitions;
}

/** The record's own headers plus Tally's identity (the sender adds `tally.session`). */
export function stamp(
  record: RecordInput,
  request: PublishRequest,
  seq: number,
): OutgoingRecord['headers'] {
  const headers: Record<string, Buffer | Buffer[]> = {};
  for (const { name, value } of record.headers) {
    const existing = headers[name];
    if (existing === undefined) headers[name] = value;
    else headers[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  headers['tally.stream'] = Buffer.from(request.stream);
  headers['tally.seq'] = Buffer.from(String(seq));
  if (request.idempotencyKey !== undefined) {
    headers['tally.idempotency-key'] = Buffer.from(request.idempotencyKey);
  }
  return headers;
}
