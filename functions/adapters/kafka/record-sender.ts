import { randomBytes } from 'node:crypto';
import type { Kafka, Message, Producer, RecordMetadata } from 'kafkajs';
import { beforeDeadline, type Deadline, DeadlineExceeded } from '../../core/deadline.js';
import type { RecordOutcome } from '../../core/outcomes.js';
import type { OutgoingRecord, RecordSender } from '../../core/publish-ports.js';
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
  readonly log: (level: 'warn' | 'info', message: string, extra?: object) => void;
}

/**
 * One idempotent producer (acks=all) per container, connected lazily once and reused across warm
 * invocations. A send that outlives its deadline, or a fatal producer error, retires the
 * producer: the next send starts a new session (new producer id, new `tally.session`).
 */
export function createRecordSender(kafka: Kafka, options: RecordSenderOptions) {
  let current: Session | undefined;

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
    if (current === session) current = undefined;
    options.log('warn', 'producer session retired', { session: session.id, reason });
    session.producer.disconnect().catch(() => {});
  }

  const sessionNow = () => {
    current ??= open();
    return current;
  };

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
    const messages: Message[] = records.map((record) => ({
      partition: record.partition,
      key: record.key,
      value: record.value,
      headers: { ...record.headers, 'tally.session': Buffer.from(session.id) },
      timestamp: String(record.timestamp),
    }));
    const partitions = new Set(records.map((record) => record.partition));
    const sending = session.producer.send({
      topic,
      acks: -1,
      timeout: Math.max(1, Math.min(deadline.remainingMs(), options.requestTimeoutMs)),
      messages,
    });
    sending.catch(() => {}); // an abandoned send must not become an unhandled rejection
    let metadata: RecordMetadata[];
    try {
      metadata = await beforeDeadline(sending, deadline, 'producing');
    } catch (error) {
      if (error instanceof DeadlineExceeded) {
        retire(session, 'a send outlived its deadline');
        return all({ status: 'UNKNOWN', message: error.message });
      }
      const failure = classifySendFailure(error, partitions.size);
      if (failure.replaceProducer) retire(session, failure.outcome.status);
      return all(failure.outcome);
    }
    return { session: session.id, outcomes: offsetsOf(records, metadata) };
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

/** kafkajs returns one base offset per partition; records keep their order within it. */
function offsetsOf(
  records: readonly OutgoingRecord[],
  metadata: RecordMetadata[],
): RecordOutcome[] {
  const next = new Map<number, bigint>();
  for (const entry of metadata) {
    if (entry.baseOffset !== undefined) next.set(entry.partition, BigInt(entry.baseOffset));
  }
  return records.map((record) => {
    const offset = next.get(record.partition);
    if (offset === undefined) {
      return { status: 'UNKNOWN', message: `no acknowledgement for partition ${record.partition}` };
    }
    next.set(record.partition, offset + 1n);
    return { status: 'ACKED', partition: record.partition, offset: offset.toString() };
  });
}
