import { createHash } from 'node:crypto';
import type { Deadline } from './deadline.js';
import {
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  PayloadTooLargeError,
  type TallyError,
  UnprocessableInputError,
} from './errors.js';
import { partitionForKey } from './murmur2.js';
import type { RecordOutcome } from './outcomes.js';
import type {
  Ledger,
  OutgoingRecord,
  RecordSender,
  Reservation,
  Reservations,
  SequenceAllocator,
  TopicCatalog,
  TopicDescription,
} from './publish-ports.js';
import { estimatedRecordBytes, type RecordInput } from './record-input.js';
import { isInternalTopic, topicNameProblem } from './topic-names.js';

export interface PublishRequest {
  readonly topic: string;
  readonly stream: string;
  readonly idempotencyKey: string | undefined;
  /** Parsed records, or why a record could not be parsed (reported in its place). */
  readonly records: ReadonlyArray<RecordInput | TallyError>;
  readonly deadline: Deadline;
  readonly now: number;
}

export type RecordResult =
  | { readonly kind: 'rejected'; readonly error: TallyError }
  | {
      readonly kind: 'published';
      readonly input: RecordInput;
      readonly seq: number;
      readonly partition: number;
      readonly timestamp: number;
      readonly outcome: RecordOutcome;
    };

export interface PublishResult {
  readonly topic: string;
  readonly stream: string;
  readonly results: readonly RecordResult[];
  /** Problems that did not change any record's outcome (e.g. the final ledger write failed). */
  readonly warnings: readonly string[];
}

export interface PublisherPorts {
  readonly catalog: TopicCatalog;
  readonly sender: RecordSender;
  readonly allocator: SequenceAllocator;
  readonly ledger: Ledger;
  readonly reservations: Reservations;
  readonly allowTopic: (topic: string) => boolean;
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

function checkRecord(record: RecordInput, topic: TopicDescription, index: number) {
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

function choosePartition(record: RecordInput, topic: TopicDescription, firstSeq: number): number {
  if (record.partition !== undefined) return record.partition;
  const key = record.key?.bytes;
  if (key) return partitionForKey(key, topic.partitions);
  // Keyless records of one request share a partition derived from their seqs, so a retry with
  // the same Idempotency-Key sends them to the same place.
  return firstSeq % topic.partitions;
}

/** The record's own headers plus Tally's identity (the sender adds `tally.session`). */
function stamp(
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

export function createPublisher(ports: PublisherPorts) {
  async function reserve(request: PublishRequest, count: number): Promise<Reservation> {
    const key = request.idempotencyKey;
    const print = fingerprint(request);
    const existing = key === undefined ? undefined : await ports.reservations.get(key);
    const reservation =
      existing ??
      ({
        idempotencyKey: key ?? '',
        fingerprint: print,
        stream: request.stream,
        topic: request.topic,
        count,
        firstSeq: await ports.allocator.allocate(request.stream, count),
      } satisfies Reservation);
    const stored =
      key === undefined || existing
        ? reservation
        : await ports.reservations.putIfAbsent(reservation);
    if (stored.fingerprint !== print || stored.count !== count) {
      throw new UnprocessableInputError(
        'Idempotency-Key: this key was already used for a different request (topic, stream or records differ)',
        { field: 'Idempotency-Key' },
      );
    }
    return stored;
  }

  async function publish(request: PublishRequest): Promise<PublishResult> {
    checkTopic(request.topic, ports.allowTopic);
    const topic = await ports.catalog.describe(request.topic, request.deadline);
    if (topic === undefined) {
      throw new NotFoundError(`topic_name: topic ${request.topic} does not exist`, {
        field: 'topic_name',
        errorCode: 40403,
      });
    }
    const checked = request.records.map((record, i) =>
      'headers' in record ? checkRecord(record, topic, i) : record,
    );
    const accepted = checked.filter((r): r is RecordInput => 'headers' in r);
    const warnings: string[] = [];
    if (accepted.length === 0) {
      return {
        topic: request.topic,
        stream: request.stream,
        warnings,
        results: checked.map((error) => ({ kind: 'rejected', error: error as TallyError })),
      };
    }

    const reservation = await reserve(request, accepted.length);
    const previous =
      request.idempotencyKey === undefined
        ? undefined
        : await ports.ledger.find(request.stream, reservation.firstSeq);
    const session = await ports.sender.session();
    const planned = accepted.map((input, i) => {
      const seq = reservation.firstSeq + i;
      const before = previous?.outcomes[i];
      return {
        input,
        seq,
        partition: choosePartition(input, topic, reservation.firstSeq),
        timestamp: input.timestamp ?? request.now,
        alreadyAcked: before?.status === 'ACKED' ? before : undefined,
      };
    });
    const toSend = planned.filter((p) => p.alreadyAcked === undefined);
    const block = (outcomes: RecordOutcome[], session: string) => ({
      stream: request.stream,
      firstSeq: reservation.firstSeq,
      topic: request.topic,
      session,
      idempotencyKey: request.idempotencyKey,
      outcomes,
    });

    // Recorded before anything is sent: a record in flight is never missing from the ledger.
    const inFlight: RecordOutcome = {
      status: 'UNKNOWN',
      message: `sent by session ${session}, no answer recorded`,
    };
    await ports.ledger.write(
      block(
        planned.map((p) => p.alreadyAcked ?? inFlight),
        session,
      ),
    );
    const sent = await ports.sender.send(
      request.topic,
      toSend.map((p) => ({
        partition: p.partition,
        key: p.input.key?.bytes ?? null,
        value: p.input.value?.bytes ?? null,
        headers: stamp(p.input, request, p.seq),
        timestamp: p.timestamp,
      })),
      request.deadline,
    );
    const outcomes = new Map(toSend.map((p, i) => [p.seq, sent.outcomes[i] ?? inFlight]));
    const final = planned.map((p) => p.alreadyAcked ?? outcomes.get(p.seq) ?? inFlight);
    try {
      await ports.ledger.write(block(final, sent.session));
    } catch (error) {
      warnings.push(
        `outcomes not recorded in the ledger (it still says UNKNOWN): ${String(error)}`,
      );
    }

    let next = 0;
    const results: RecordResult[] = checked.map((record) => {
      if (!('headers' in record)) return { kind: 'rejected', error: record };
      const p = planned[next] as (typeof planned)[number];
      const outcome = final[next] as RecordOutcome;
      next++;
      return {
        kind: 'published',
        input: p.input,
        seq: p.seq,
        partition: p.partition,
        timestamp: p.timestamp,
        outcome,
      };
    });
    return { topic: request.topic, stream: request.stream, results, warnings };
  }

  return { publish };
}
