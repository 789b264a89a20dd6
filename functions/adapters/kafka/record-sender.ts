import { randomBytes } from 'node:crypto';
import type { Kafka, Message, Producer, RecordMetadata } from 'kafkajs';
import { beforeDeadline, type Deadline, DeadlineExceeded } from '../../core/deadline.js';
import type { RecordOutcome } from '../../core/outcomes.js';
import type { OutgoingRecord, RecordSender } from '../../core/publish-ports.js';
import { type PartitionBatches, partitionBatches } from './record-batches.js';
import { classifySendFailure } from './send-errors.js';

interface Session {
  readonly id: string;
  readonly producer: Producer;
  readonly connected: Promise<void>;
}

export interface RecordSenderOptions {
  /** kafkajs retries inside one send; every send is also bounded by the request's deadline. */
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
  let current: Session | undefined;
  // Several partitions of one send can fail at once: a session is retired (and logged) once.
  const retired = new WeakSet<Session>();

  function open(): Session {
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      retry: { retries: options.retries, initialRetryTime: 100, maxRetryTime: 2000 },
    });
    const connected = producer.connect();
    connected.catch(() => {}); // awaited by senders; a failure retires the session there
    const session = { id: `s-${randomBytes(9).toString('base64url')}`, producer, connected };
    options.log('info', 'producer session opened', { session: session.id });
    return session;
  }

  function retire(session: Session, reason: string): void {
    if (retired.has(session)) return;
    retired.add(session);
    if (current === session) current = undefined;
    options.log('warn', 'producer session retired', { session: session.id, reason });
    session.producer.disconnect().catch(() => {});
  }

  const sessionNow = () => {
    current ??= open();
    return current;
  };

  /** One record batch of one partition: its records' outcomes. */
  async function sendBatch(
    session: Session,
    topic: string,
    partition: number,
    messages: Message[],
    deadline: Deadline,
  ): Promise<RecordOutcome[]> {
    const all = (outcome: RecordOutcome) => messages.map(() => outcome);
    const sending = session.producer.send({
      topic,
      acks: -1,
      timeout: Math.max(1, Math.min(deadline.remainingMs(), options.requestTimeoutMs)),
      messages,
    });
    sending.catch(() => {}); // an abandoned send must not become an unhandled rejection
    try {
      const metadata = await beforeDeadline(sending, deadline, 'producing');
      return offsetsOf(partition, messages.length, metadata);
    } catch (error) {
      if (error instanceof DeadlineExceeded) {
        retire(session, 'a send outlived its deadline');
        return all({ status: 'UNKNOWN', message: error.message });
      }
      const failure = classifySendFailure(error, 1);
      if (failure.replaceProducer) retire(session, failure.outcome.status);
      return all(failure.outcome);
    }
  }

  /**
   * A partition's batches one after another. After a batch that was not acknowledged the rest
   * stay NOT_SENT: written now, they would sit in the log ahead of that batch's records, which a
   * retry with the same Idempotency-Key sends again; NOT_SENT lets the retry send all, in order.
   */
  async function sendInOrder(
    session: Session,
    topic: string,
    { partition, batches }: PartitionBatches,
    messages: readonly Message[],
    deadline: Deadline,
    outcomes: RecordOutcome[],
  ): Promise<void> {
    let stop: string | undefined; // why the rest of the partition's batches are not sent
    for (const batch of batches) {
      if (stop === undefined && retired.has(session)) stop = 'the producer session was retired';
      if (stop === undefined && deadline.expired()) stop = 'the request deadline passed';
      const results: RecordOutcome[] =
        stop === undefined
          ? await sendBatch(
              session,
              topic,
              partition,
              batch.map((i) => messages[i] as Message),
              deadline,
            )
          : batch.map(() => ({ status: 'NOT_SENT', message: `not sent: ${stop}` }));
      batch.forEach((i, j) => {
        outcomes[i] = results[j] as RecordOutcome;
      });
      const failed = results.find((outcome) => outcome.status !== 'ACKED');
      if (stop === undefined && failed) {
        stop = `an earlier record batch of partition ${partition} was not acknowledged (${failed.status}); later ones would overtake it`;
      }
    }
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
    const stamped = records.map((record) => ({
      ...record,
      headers: { ...record.headers, 'tally.session': Buffer.from(session.id) },
    }));
    const messages: Message[] = stamped.map((record) => ({
      partition: record.partition,
      key: record.key,
      value: record.value,
      headers: record.headers,
      timestamp: String(record.timestamp),
    }));
    const outcomes: RecordOutcome[] = [];
    // Partitions go in parallel (kafkajs still sends one request per broker at a time, which
    // keeps the idempotent producer's sequence numbers in order).
    await Promise.all(
      partitionBatches(stamped, maxBytes).map((partition) =>
        sendInOrder(session, topic, partition, messages, deadline, outcomes),
      ),
    );
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

/** kafkajs returns the batch's base offset; its records follow it one by one. */
function offsetsOf(partition: number, count: number, metadata: RecordMetadata[]): RecordOutcome[] {
  const base = metadata.find((entry) => entry.partition === partition)?.baseOffset;
  return Array.from({ length: count }, (_, i): RecordOutcome => {
    if (base === undefined) {
      return { status: 'UNKNOWN', message: `no acknowledgement for partition ${partition}` };
    }
    return { status: 'ACKED', partition, offset: (BigInt(base) + BigInt(i)).toString() };
  });
}
