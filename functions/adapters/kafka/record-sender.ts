import { randomBytes } from 'node:crypto';
import type { Kafka, Message, Producer, RecordMetadata } from 'kafkajs';
import { SESSION_HEADER } from '../../core/publish/plan.js';
import type { OutgoingRecord, RecordSender } from '../../core/publish/ports.js';
import { bodyBytes, headerBytes, headerNameBytes } from '../../core/publish/record-size.js';
import { beforeDeadline, type Deadline, DeadlineExceeded } from '../../core/shared/deadline.js';
import type { RecordOutcome } from '../../core/shared/outcomes.js';
import { createLeaderGuard, heldIn, type LeaderGuard, NO_PARTITION } from './leader-guard.js';
import { encodeNullHeaderValues } from './null-header-values.js';
import {
  type BatchResult,
  partitionBatches,
  type RoundBatch,
  sendInRounds,
} from './record-batches.js';
import { classifySendFailure } from './send-errors.js';

interface Session {
  readonly id: string;
  /** `tally.session`'s value: the id's bytes, made once and shared by every record it sends. */
  readonly bytes: Buffer;
  readonly producer: Producer;
  /** The producer's partitioner: each attempt of a send goes to its one planned broker or not at all. */
  readonly guard: LeaderGuard;
  readonly connected: Promise<void>;
}

export interface RecordSenderOptions {
  /**
   * kafkajs's retries inside one send (TALLY_KAFKA_RETRIES, at least 1: kafkajs refuses an
   * idempotent producer without retries); every send is also bounded by the request's deadline.
   * kafkajs warns that limited retries "may invalidate EoS guarantees": when it gives up, the
   * sequence numbers it rolled back may belong to a batch the broker did write, and a later batch
   * sent under them would be taken for that one (dropped as a duplicate). Tally never sends
   * under them again: a send kafkajs gives up on is UNKNOWN, and every UNKNOWN retires the
   * session (a new producer id starts at sequence 0). Unlimited retries would not make sends
   * safer, only let kafkajs retry until the deadline where it now answers sooner. What made its
   * retries unsafe was a retry spanning brokers (leader-guard.ts), not their number.
   */
  readonly retries: number;
  readonly requestTimeoutMs: number;
  /** The topic's max.message.bytes: no record batch sent is larger. */
  readonly maxBatchBytes: (topic: string) => Promise<number>;
  readonly log: (level: 'warn' | 'info', message: string, extra?: object) => void;
}

/**
 * One idempotent producer (acks=all) per container, connected lazily once and reused across warm
 * invocations. A send that outlives its deadline, or a fatal producer error, retires the
 * producer: the next send starts a new session (new producer id, new `tally.session`).
 */
export function createRecordSender(kafka: Kafka, options: RecordSenderOptions) {
  encodeNullHeaderValues();
  let current: Session | undefined;
  // Several partitions of one send can fail at once: a session is retired (and logged) once.
  const retired = new WeakSet<Session>();

  function open(): Session {
    const guard = createLeaderGuard();
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: guard.partitioner,
      retry: { retries: options.retries, initialRetryTime: 100, maxRetryTime: 2000 },
    });
    const connected = producer.connect();
    connected.catch(() => {}); // awaited by senders; a failure retires the session there
    const id = `s-${randomBytes(9).toString('base64url')}`;
    const session = { id, bytes: Buffer.from(id), producer, guard, connected };
    options.log('info', 'producer session opened', { session: session.id });
    return session;
  }

  function retire(session: Session, reason: string): void {
    if (retired.has(session)) return;
    retired.add(session);
    if (current === session) current = undefined;
    // kafkajs may still be about to retry a send of this session: no attempt goes out any more.
    session.guard.close(`the producer session was retired (${reason})`);
    options.log('warn', 'producer session retired', { session: session.id, reason });
    session.producer.disconnect().catch(() => {});
  }

  const sessionNow = () => {
    current ??= open();
    return current;
  };

  /**
   * One producer send to one broker (`leader`, or whichever leads the first message when the
   * topic's leaders are not known yet): its records' outcomes in order, or held (not sent to
   * another broker; sent again by the next round under the same sequence numbers).
   */
  async function sendOnce(
    session: Session,
    topic: string,
    messages: Message[],
    leader: number | undefined,
    deadline: Deadline,
  ): Promise<RecordOutcome[] | { held: string; mayHaveGone: boolean }> {
    const all = (outcome: RecordOutcome) => messages.map(() => outcome);
    const guarded = session.guard.guard(messages, leader);
    const sending = session.producer.send({
      topic,
      acks: -1,
      timeout: Math.max(1, Math.min(deadline.remainingMs(), options.requestTimeoutMs)),
      messages,
    });
    sending.catch(() => {}); // an abandoned send must not become an unhandled rejection
    try {
      // A partition without an answer is UNKNOWN; the session is retired when the send ends.
      return offsetsOf(messages, await beforeDeadline(sending, deadline, 'producing'));
    } catch (error) {
      if (error instanceof DeadlineExceeded) {
        retire(session, 'a send outlived its deadline');
        return all({ status: 'UNKNOWN', message: error.message });
      }
      const held = heldIn(error);
      if (held?.reason === 'moved') return { held: held.message, mayHaveGone: guarded.mayHaveGone };
      if (held !== undefined) {
        // The session was retired by another send while this one waited for kafkajs's retry.
        return all(
          guarded.mayHaveGone
            ? { status: 'UNKNOWN', message: `sent, then ${held.message}` }
            : { status: 'NOT_SENT', message: held.message },
        );
      }
      const partitions = new Set(messages.map((message) => message.partition));
      const failure = classifySendFailure(error, partitions.size);
      if (failure.replaceProducer) retire(session, failure.outcome.status);
      return all(failure.outcome);
    }
  }

  /**
   * A round: one send per leader broker, side by side (kafkajs made one request per broker of a
   * send before; it still does, but never one attempt to several brokers).
   */
  async function sendRound(
    session: Session,
    topic: string,
    messages: readonly Message[],
    batches: readonly RoundBatch[],
    deadline: Deadline,
  ): Promise<BatchResult[]> {
    const leaders = session.guard.leaders(topic);
    const groups = new Map<number | undefined, number[]>(); // leader → places in `batches`
    batches.forEach((batch, n) => {
      const leader =
        leaders === undefined ? undefined : (leaders.get(batch.partition) ?? NO_PARTITION);
      const group = groups.get(leader);
      if (group) group.push(n);
      else groups.set(leader, [n]);
    });
    const results: BatchResult[] = new Array(batches.length);
    await Promise.all(
      [...groups].map(async ([leader, places]) => {
        const indexes = places.flatMap((n) => batches[n]?.indexes ?? []);
        const sent = await sendOnce(
          session,
          topic,
          indexes.map((i) => messages[i] as Message),
          leader,
          deadline,
        );
        let at = 0;
        for (const n of places) {
          const size = batches[n]?.indexes.length ?? 0;
          results[n] = 'held' in sent ? sent : sent.slice(at, at + size);
          at += size;
        }
      }),
    );
    return results;
  }

  async function send(
    topic: string,
    records: readonly OutgoingRecord[],
    deadline: Deadline,
  ): Promise<{ session: string; outcomes: RecordOutcome[] }> {
    const session = sessionNow();
    const all = (outcome: RecordOutcome) => ({
      session: session.id,
      outcomes: records.map(() => outcome),
    });
    if (records.length === 0) return all({ status: 'NOT_SENT', message: 'nothing to send' });
    try {
      await beforeDeadline(session.connected, deadline, 'connecting to Kafka');
    } catch (error) {
      // A connect that failed or hangs is not waited on again: the next send starts afresh.
      retire(session, `connect ${error instanceof DeadlineExceeded ? 'timed out' : 'failed'}`);
      return all({
        status: 'NOT_SENT',
        message: `not connected to Kafka: ${(error as Error).message}`,
      });
    }
    let maxBytes: number;
    try {
      maxBytes = await beforeDeadline(options.maxBatchBytes(topic), deadline, 'max.message.bytes');
    } catch (error) {
      return all({
        status: 'NOT_SENT',
        message: `the topic's max.message.bytes is not known: ${(error as Error).message}`,
      });
    }
    // One kafkajs message per record, made once; its size as kafkajs will encode it, once.
    const messages: Message[] = new Array(records.length);
    const bodies: number[] = new Array(records.length);
    let timestamp = Number.NaN;
    let timestampText = '';
    const size: HeadersSize = { count: 0, bytes: 0 };
    for (let i = 0; i < records.length; i++) {
      const record = records[i] as OutgoingRecord;
      const headers = withSession(record.headers, session.bytes, size);
      // A request's records mostly share one timestamp: its text is made once.
      if (record.timestamp !== timestamp) {
        timestamp = record.timestamp;
        timestampText = String(timestamp);
      }
      messages[i] = {
        partition: record.partition,
        key: record.key,
        value: record.value,
        headers,
        timestamp: timestampText,
      };
      bodies[i] = bodyBytes(record.key, record.value, size.count, size.bytes);
    }
    const outcomes = await sendInRounds(
      partitionBatches(records, maxBytes, bodies),
      (batches) => sendRound(session, topic, messages, batches, deadline),
      () => {
        if (retired.has(session)) return 'the producer session was retired';
        return deadline.expired() ? 'the request deadline passed' : undefined;
      },
    );
    // A record that may be in the log under sequence numbers kafkajs rolled back: no later batch
    // of this session may be sent under them (the broker would take it for this one).
    if (outcomes.some((outcome) => outcome.status === 'UNKNOWN')) {
      retire(session, 'a record of the send is UNKNOWN');
    }
    return { session: session.id, outcomes };
  }

  return {
    async session() {
      return sessionNow().id;
    },
    send,
    /** Loads metadata for topics at init, so the first send does not wait for it (seed 001). */
    async warm(topics: readonly string[], deadline: Deadline) {
      if (topics.length === 0) return;
      const { producer, connected } = sessionNow();
      await beforeDeadline(
        connected.then(() =>
          producer.sendBatch({ topicMessages: topics.map((topic) => ({ topic, messages: [] })) }),
        ),
        deadline,
        'warming topic metadata',
      );
    },
    async close() {
      if (current) await current.producer.disconnect();
      current = undefined;
    },
  } satisfies RecordSender & Record<string, unknown>;
}

/**
 * kafkajs returns one base offset per partition; records keep their order within it. Offsets are
 * counted as numbers while they stay exact (always, in practice), as BigInt past 2^53.
 */
export function offsetsOf(
  messages: readonly Message[],
  metadata: RecordMetadata[],
): RecordOutcome[] {
  const next = new Map<number, number | bigint>();
  for (const entry of metadata) {
    if (entry.baseOffset === undefined) continue;
    const base = Number(entry.baseOffset);
    const exact = Number.isSafeInteger(base + messages.length);
    next.set(entry.partition, exact ? base : BigInt(entry.baseOffset));
  }
  return messages.map((message) => {
    const partition = message.partition as number;
    const offset = next.get(partition);
    if (offset === undefined) {
      return { status: 'UNKNOWN', message: `no acknowledgement for partition ${partition}` };
    }
    next.set(partition, typeof offset === 'number' ? offset + 1 : offset + 1n);
    return { status: 'ACKED', partition, offset: String(offset) };
  });
}

/** Header values written (a header with several values once per value) and their bytes. */
interface HeadersSize {
  count: number;
  bytes: number;
}

/**
 * `{...headers, 'tally.session': session}` (the same keys in the same order, so the same wire
 * bytes), sized into `size` while it is copied: what `recordBodyBytesOf` counts, without a
 * second walk over the headers or measuring their names again.
 */
export function withSession(
  headers: OutgoingRecord['headers'],
  session: Buffer,
  size: HeadersSize,
): Record<string, Buffer | Buffer[]> {
  const copy: Record<string, Buffer | Buffer[]> = {};
  let count = 0;
  let bytes = 0;
  let sessionSet = false;
  for (const name in headers) {
    if (!Object.hasOwn(headers, name)) continue;
    // A header already named tally.session keeps its place and takes the session's value, as
    // the spread did.
    const values = name === SESSION_HEADER ? session : (headers[name] as Buffer | Buffer[]);
    if (name === SESSION_HEADER) sessionSet = true;
    if (name === '__proto__') {
      // A client header named __proto__ is a header like any other (an assignment would set
      // the copy's prototype instead).
      Object.defineProperty(copy, name, {
        value: values,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else copy[name] = values;
    const nameBytes = headerNameBytes(name);
    if (Buffer.isBuffer(values)) {
      bytes += headerBytes(nameBytes, values.length);
      count++;
    } else {
      for (const value of values) bytes += headerBytes(nameBytes, value.length);
      count += values.length;
    }
  }
  if (!sessionSet) {
    copy[SESSION_HEADER] = session;
    bytes += headerBytes(headerNameBytes(SESSION_HEADER), session.length);
    count++;
  }
  size.count = count;
  size.bytes = bytes;
  return copy;
}
