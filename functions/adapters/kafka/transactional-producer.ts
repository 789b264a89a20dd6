import type { Kafka, Message, Producer, Transaction } from 'kafkajs';
import type { OutgoingRecord } from '../../core/publish/ports.js';
import { beforeDeadline, type Deadline } from '../../core/shared/deadline.js';
import { DependencyUnavailableError } from '../../core/shared/errors.js';
import { withInitRetry } from './init-retry.js';
import { createLeaderGuard, heldIn, type LeaderGuard, NO_PARTITION } from './leader-guard.js';
import { offsetsOf } from './record-sender.js';
import {
  commitRuledOut,
  fenceMayRetry,
  kafkaErrorType,
  reasonOf,
  TransactionInDoubtError,
  TransactionNotCommittedError,
} from './txn-errors.js';

// One transactional producer per leased transactional.id (core/publish/txn-id-pool.ts), each
// request's records in one transaction (issue 33). What kafkajs 2.2.4 gets wrong, and how it is
// handled here (docs/transactions.md has the whole list):
// - A failed EndTxn leaves its state machine in COMMITTING (or ABORTING) for good: the producer can
//   neither retry the commit, nor abort, nor begin another transaction. Every failure retires the
//   producer; the next one initialises the id again, which ends the old transaction.
// - A produce request it gives up on rolls back the partition's sequence number, though the batch
//   may be in the log: a later batch of the same epoch under that number would be taken for it
//   (acknowledged, not appended). Retiring the producer (a new epoch) rules that out.
// - A retried send spanning brokers re-sends batches already written under new sequence numbers
//   (leader-guard.ts): inside a transaction that is a committed duplicate. Each send goes to one
//   broker, as record-sender.ts does.
// - CONCURRENT_TRANSACTIONS (the coordinator still writes the previous commit's markers when the
//   next AddPartitionsToTxn arrives) is retried by the producer's one retrier, whose first backoff
//   is 300 ms by default. kafkajs cannot back off per error, so the whole retrier starts at 10 ms
//   and doubles up to 1 s: a back-to-back transaction waits tens of ms, a leader election still
//   gets ~4 s of retries, and the request's deadline bounds it all.
// - InitProducerId is retried by kafkajs's default retrier whatever the client or producer says
//   (300 ms first backoff in production), and a fence of an id whose transaction is open always
//   waits for one retry at least: init-retry.ts gives it the same retrier as the rest (fence of
//   an open transaction on three local brokers: median 1485 ms before, see docs/transactions.md).
// - InitProducerId gives up at once on a connection error (a coordinator that just died, before
//   the controller moved its partitions): `fence` tries again until its deadline.

/** The producer's retrier: see above. Kafka's Java client backs off 20 ms on this error. */
export const TXN_RETRY = { retries: 10, initialRetryTime: 10, maxRetryTime: 1000, multiplier: 2 };
/** Backoff between fencing attempts (a coordinator moving after its broker died takes seconds). */
const FENCE_BACKOFF = { firstMs: 100, maxMs: 1000 };
/** Rounds of regrouping a transaction's records by leader (a leader moved before any was sent). */
const MAX_ROUNDS = 3;

export interface TransactionalProducerOptions {
  readonly txnId: string;
  /**
   * transaction.timeout.ms: how long the coordinator lets a transaction of this id stay open
   * before aborting it, so the longest an abandoned transaction holds read_committed consumers
   * back and stays in doubt. At most the brokers' transaction.max.timeout.ms.
   */
  readonly transactionTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly log: (level: 'warn' | 'info', message: string, extra?: object) => void;
}

interface Incarnation {
  readonly number: number;
  readonly producer: Producer;
  readonly guard: LeaderGuard;
  readonly connected: Promise<void>;
}

export interface CommittedTransaction {
  readonly txnId: string;
  /** Which producer of this id in this container sent it (1, 2, …: a new one after a failure). */
  readonly incarnation: number;
  /** Each record's place, in order: committed, visible to read_committed consumers. */
  readonly offsets: ReadonlyArray<{ readonly partition: number; readonly offset: string }>;
}

export function createTransactionalProducer(kafka: Kafka, options: TransactionalProducerOptions) {
  const { txnId } = options;
  let current: Incarnation | undefined;
  let opened = 0;
  // kafkajs allows one transaction at a time per producer: requests take turns.
  let queue: Promise<unknown> = Promise.resolve();

  function open(): Incarnation {
    const guard = createLeaderGuard();
    // The idempotent producer id connect() allocates is initialised with TXN_RETRY too.
    const producer = withInitRetry(TXN_RETRY, () =>
      kafka.producer({
        transactionalId: txnId,
        transactionTimeout: options.transactionTimeoutMs,
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        createPartitioner: guard.partitioner,
        retry: TXN_RETRY,
      }),
    );
    const connected = producer.connect();
    connected.catch(() => {});
    opened += 1;
    options.log('info', 'transactional producer opened', { txnId, incarnation: opened });
    return { number: opened, producer, guard, connected };
  }

  function retire(incarnation: Incarnation, reason: string): void {
    if (current !== incarnation) return;
    current = undefined;
    incarnation.guard.close(`the transactional producer was retired (${reason})`);
    options.log('warn', 'transactional producer retired', { txnId, reason });
    incarnation.producer.disconnect().catch(() => {});
  }

  /** The transaction begun: on a new producer, after InitProducerId, which fences older ones. */
  async function begin(incarnation: Incarnation, deadline: Deadline): Promise<Transaction> {
    await beforeDeadline(incarnation.connected, deadline, 'connecting to Kafka');
    // kafkajs makes the transactional id's InitProducerId retrier in the first transaction() call.
    const beginning = withInitRetry(TXN_RETRY, () => incarnation.producer.transaction());
    beginning.catch(() => {});
    return beforeDeadline(beginning, deadline, 'initialising the id');
  }

  /** Sends every message inside `txn`, one send per leader broker; offsets in order. */
  async function sendAll(
    incarnation: Incarnation,
    txn: Transaction,
    topic: string,
    messages: readonly Message[],
    deadline: Deadline,
  ): Promise<CommittedTransaction['offsets']> {
    const placed = new Map<Message, { partition: number; offset: string }>();
    let pending = [...messages];
    for (let round = 0; pending.length > 0; round++) {
      if (round >= MAX_ROUNDS)
        throw new Error(`partition leaders kept moving over ${round} rounds`);
      const leaders = incarnation.guard.leaders(topic);
      const groups = new Map<number | undefined, Message[]>();
      for (const message of pending) {
        const partition = message.partition as number;
        const leader = leaders === undefined ? undefined : (leaders.get(partition) ?? NO_PARTITION);
        groups.set(leader, [...(groups.get(leader) ?? []), message]);
      }
      const held: Message[] = [];
      for (const [leader, group] of groups) {
        const guarded = incarnation.guard.guard(group, leader);
        const sending = txn.send({
          topic,
          acks: -1,
          timeout: Math.max(1, Math.min(deadline.remainingMs(), options.requestTimeoutMs)),
          messages: group,
        });
        sending.catch(() => {});
        try {
          const outcomes = offsetsOf(group, await beforeDeadline(sending, deadline, 'producing'));
          outcomes.forEach((outcome, i) => {
            if (outcome.status !== 'ACKED') throw new Error(outcome.message);
            // The place only: the outcome also carries its status, which is no offset's.
            placed.set(group[i] as Message, {
              partition: outcome.partition,
              offset: outcome.offset,
            });
          });
        } catch (error) {
          // Held before any attempt went out: sent again next round, to its leader then. Once an
          // attempt may have gone, another broker's copy would be a second one in the transaction.
          if (heldIn(error)?.reason === 'moved' && !guarded.mayHaveGone) held.push(...group);
          else throw error;
        }
      }
      pending = held;
    }
    return messages.map((message) => placed.get(message) as { partition: number; offset: string });
  }

  /** Ends `txn` aborted if it can before the deadline; the caller retires the producer anyway. */
  async function abortQuietly(txn: Transaction | undefined, deadline: Deadline): Promise<void> {
    if (txn === undefined || !txn.isActive()) return;
    await beforeDeadline(txn.abort(), deadline, 'aborting').catch(() => {});
  }

  async function transact(
    topic: string,
    records: readonly OutgoingRecord[],
    deadline: Deadline,
  ): Promise<CommittedTransaction> {
    current ??= open();
    const incarnation = current;
    const messages: Message[] = records.map((record) => ({
      partition: record.partition,
      key: record.key,
      value: record.value,
      headers: { ...record.headers },
      timestamp: String(record.timestamp),
    }));
    let txn: Transaction | undefined;
    let offsets: CommittedTransaction['offsets'] = [];
    try {
      txn = await begin(incarnation, deadline);
      offsets = await sendAll(incarnation, txn, topic, messages, deadline);
    } catch (error) {
      await abortQuietly(txn, deadline);
      retire(incarnation, kafkaErrorType(error));
      throw new TransactionNotCommittedError(
        `${txn === undefined ? 'the transaction could not begin' : 'a send failed'} (${kafkaErrorType(error)})`,
        { reason: reasonOf(error, false), txnId, cause: error },
      );
    }
    const committing = txn.commit();
    committing.catch(() => {});
    try {
      await beforeDeadline(committing, deadline, 'committing');
    } catch (error) {
      retire(incarnation, `commit failed: ${kafkaErrorType(error)}`);
      const reason = reasonOf(error, true);
      if (commitRuledOut(error)) {
        throw new TransactionNotCommittedError(
          `the commit was refused (${kafkaErrorType(error)})`,
          {
            reason,
            txnId,
            cause: error,
          },
        );
      }
      throw new TransactionInDoubtError(
        `the commit got no definite answer (${kafkaErrorType(error)})`,
        {
          reason,
          txnId,
          cause: error,
          offsets,
        },
      );
    }
    return { txnId, incarnation: incarnation.number, offsets };
  }

  /** Runs `work` after the requests before it (one transaction at a time). */
  function inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = queue.then(work, work);
    queue = run.catch(() => {});
    return run;
  }

  return {
    txnId,
    /**
     * Sends `records` to `topic` in one transaction and commits it: each record's committed place,
     * or TransactionNotCommittedError / TransactionInDoubtError saying what is known.
     */
    send: (topic: string, records: readonly OutgoingRecord[], deadline: Deadline) =>
      inTurn(() => transact(topic, records, deadline)),
    /**
     * Initialises the id now (a new producer's InitProducerId), without sending: every older
     * producer of it is fenced and its open transaction ended (aborted, or committed if its commit
     * was prepared). For an id taken over from an expired lease, before anything is sent under it.
     */
    fence: (deadline: Deadline) =>
      inTurn(async () => {
        if (current) retire(current, 'fencing');
        for (let attempt = 1, backoffMs = FENCE_BACKOFF.firstMs; ; attempt++) {
          current = open();
          const incarnation = current;
          try {
            await (await begin(incarnation, deadline)).abort(); // no partitions: no EndTxn is sent
            return;
          } catch (error) {
            retire(incarnation, `fencing failed: ${kafkaErrorType(error)}`);
            // A coordinator that died is named by FindCoordinator until the controller moves its
            // partitions (broker.session.timeout.ms), and kafkajs gives up InitProducerId on the
            // first connection error: try again while the deadline allows.
            if (fenceMayRetry(error) && deadline.remainingMs() > backoffMs) {
              options.log('warn', 'fencing the transactional id again', {
                txnId,
                attempt,
                error: kafkaErrorType(error),
              });
              await new Promise((resolve) => setTimeout(resolve, backoffMs));
              backoffMs = Math.min(backoffMs * 2, FENCE_BACKOFF.maxMs);
              continue;
            }
            throw new DependencyUnavailableError(
              `the transactional id ${txnId} could not be initialised (${kafkaErrorType(error)}, attempt ${attempt}): nothing was sent under it`,
              { cause: error, retryAfterSeconds: 1 },
            );
          }
        }
      }),
    async close() {
      const incarnation = current;
      current = undefined;
      await incarnation?.producer.disconnect();
    },
  };
}
