import { randomBytes } from 'node:crypto';
import type {
  Kafka,
  Message,
  Producer,
  ProducerConfig,
  RecordMetadata,
  Transaction,
} from 'kafkajs';
import { SEQ_HEADER, SESSION_HEADER } from '../../core/publish/plan.js';
import type {
  OutgoingRecord,
  TransactionalSender,
  TxnLease,
  TxnMark,
  TxnOffsets,
  TxnSendOutcome,
  TxnSettler,
} from '../../core/publish/ports.js';
import type { createTxnIdLeaser } from '../../core/publish/txn-id-pool.js';
import { beforeDeadline, type Deadline } from '../../core/shared/deadline.js';
import { DependencyFailedError, DependencyUnavailableError } from '../../core/shared/errors.js';
import { createHeaderReader } from './log-scanner.js';
import { offsetsOf } from './record-sender.js';
import { createTransactionalProducer } from './transactional-producer.js';
import {
  kafkaErrorType,
  TransactionInDoubtError,
  TransactionNotCommittedError,
} from './txn-errors.js';

// Transactional publish (issue 33) on the transactional producer adapter
// (transactional-producer.ts, used as it is): its container's leased id, a step between the last
// acknowledged send and EndTxn(commit), and the settling of an earlier attempt's transaction.
//
// The step: transactional-producer.ts sends and commits in one call. Its kafkajs client is handed
// a wrapper here (`hooked`) whose transactions run `prepare` before their commit: the ledger's
// PREPARED write (core/publish/send-step.ts). EndTxn(commit) goes out only if `prepare` resolved
// and the request still has time; otherwise the wrapper aborts the transaction and refuses the
// commit, so the adapter's "in doubt" is known here to be "never committed" (`commitSent`).

/** One transaction of this sender: its prepare step and what became of its commit. */
interface Turn {
  readonly records: readonly OutgoingRecord[];
  readonly deadline: Deadline;
  readonly prepare: (offsets: TxnOffsets) => Promise<void>;
  /** Each acknowledged send's place, by the identity of its `tally.seq` header's bytes. */
  readonly placed: Map<unknown, { partition: number; offset: string }>;
  commitSent: boolean;
  /** The adapter gave up on it (an error, the deadline): no commit may go out any more. */
  abandoned: boolean;
}

/** `prepare` failed or came too late: the transaction was aborted, no commit was sent. */
class PrepareRefused extends Error {
  override readonly name = 'PrepareRefused';
}

export interface TxnSenderOptions {
  readonly leaser: ReturnType<typeof createTxnIdLeaser>;
  readonly transactionTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly log: (level: 'warn' | 'info', message: string, extra?: object) => void;
}

export function createTxnSender(kafka: Kafka, options: TxnSenderOptions): TransactionalSender {
  let turn: Turn | undefined;

  function hookedTransaction(txn: Transaction, mine: Turn | undefined): Transaction {
    if (mine === undefined) return txn; // fencing: no partitions, no commit
    return {
      ...txn,
      send: async (record) => {
        const answer: RecordMetadata[] = await txn.send(record);
        const outcomes = offsetsOf(record.messages, answer);
        record.messages.forEach((message: Message, i) => {
          const outcome = outcomes[i];
          const seq = (message.headers as Record<string, unknown> | undefined)?.[SEQ_HEADER];
          if (outcome?.status === 'ACKED') mine.placed.set(seq, outcome);
        });
        return answer;
      },
      commit: async () => {
        const offsets: Array<{ partition: number; offset: string }> = [];
        for (const record of mine.records) {
          const place = mine.placed.get(record.headers[SEQ_HEADER]);
          if (place === undefined) throw new PrepareRefused('a record has no acknowledged offset');
          offsets.push(place);
        }
        try {
          await mine.prepare(offsets);
        } catch (error) {
          await txn.abort().catch(() => {});
          throw new PrepareRefused(`the PREPARED write failed: ${String(error)}`, { cause: error });
        }
        if (mine.abandoned || mine.deadline.expired()) {
          await txn.abort().catch(() => {});
          throw new PrepareRefused('the request deadline came before the commit');
        }
        mine.commitSent = true;
        return txn.commit();
      },
    };
  }

  /** `kafka` whose producers' transactions run the current turn's prepare step. */
  const hooked: Kafka = Object.create(kafka);
  hooked.producer = (config?: ProducerConfig): Producer => {
    const producer = kafka.producer(config);
    const wrapped: Producer = Object.create(producer);
    wrapped.transaction = async () => {
      const mine = turn;
      return hookedTransaction(await producer.transaction(), mine);
    };
    return wrapped;
  };

  type Adapter = ReturnType<typeof createTransactionalProducer>;
  let held: { lease: TxnLease; producer: Adapter } | undefined;
  const producerFor = (txnId: string, client: Kafka): Adapter =>
    createTransactionalProducer(client, {
      txnId,
      transactionTimeoutMs: options.transactionTimeoutMs,
      requestTimeoutMs: options.requestTimeoutMs,
      log: options.log,
    });

  // One lease question at a time (a container's requests share its id), one transaction at a
  // time (the adapter's own rule, kept here so that `turn` is the running one's).
  let leasing: Promise<unknown> = Promise.resolve();
  let sending: Promise<unknown> = Promise.resolve();
  const serially = <T>(chain: 'lease' | 'send', work: () => Promise<T>): Promise<T> => {
    const run = (chain === 'lease' ? leasing : sending).then(work, work);
    if (chain === 'lease') leasing = run.catch(() => {});
    else sending = run.catch(() => {});
    return run;
  };

  async function lease(deadline: Deadline): Promise<TxnLease> {
    const taken = await beforeDeadline(
      options.leaser.forRequest(),
      deadline,
      'leasing a transactional id',
    );
    const { txnId, generation } = taken.lease;
    if (held?.lease.txnId !== txnId || held.lease.generation !== generation) {
      const before = held;
      held = { lease: { txnId, generation }, producer: producerFor(txnId, hooked) };
      before?.producer.close().catch(() => {});
      // Taken over from an expired lease: a frozen holder may still have a transaction open.
      if (taken.mustFence) await held.producer.fence(deadline);
    }
    return held.lease;
  }

  async function send(
    lease: TxnLease,
    topic: string,
    records: readonly OutgoingRecord[],
    deadline: Deadline,
    prepare: (offsets: TxnOffsets) => Promise<void>,
  ): Promise<TxnSendOutcome> {
    const producer = held?.lease.txnId === lease.txnId ? held.producer : undefined;
    if (producer === undefined) {
      return { status: 'NOT_COMMITTED', message: `the lease on ${lease.txnId} was given up` };
    }
    const session = Buffer.from(`${lease.txnId}#${lease.generation}`);
    const stamped = records.map((r) => ({
      ...r,
      headers: { ...r.headers, [SESSION_HEADER]: session },
    }));
    const mine: Turn = {
      records: stamped,
      deadline,
      prepare,
      placed: new Map(),
      commitSent: false,
      abandoned: false,
    };
    turn = mine;
    try {
      const committed = await producer.send(topic, stamped, deadline);
      return { status: 'COMMITTED', offsets: committed.offsets };
    } catch (error) {
      // Synchronously with the failure: a prepare still running can no longer commit.
      mine.abandoned = true;
      const what = `transaction of ${lease.txnId}: ${error instanceof Error ? error.message : String(error)}`;
      if (error instanceof TransactionInDoubtError && mine.commitSent) {
        return { status: 'IN_DOUBT', message: what, offsets: error.offsets };
      }
      if (
        error instanceof TransactionNotCommittedError ||
        error instanceof TransactionInDoubtError ||
        !mine.commitSent
      ) {
        return {
          status: 'NOT_COMMITTED',
          message: `not committed, not visible to read_committed consumers (${kafkaErrorType(error)}): ${what}`,
        };
      }
      return { status: 'IN_DOUBT', message: what, offsets: [] };
    } finally {
      if (turn === mine) turn = undefined;
    }
  }

  const settler = createTxnSettler(kafka, options, (mark, deadline) => {
    // This container's own producer of the id fences itself (a new one), in its turn.
    if (held?.lease.txnId !== mark.txnId) return undefined;
    const mineNow = held.producer;
    return serially('send', () => mineNow.fence(deadline));
  });

  return {
    lease: (deadline) => serially('lease', () => lease(deadline)),
    send: (txnLease, topic, records, deadline, prepare) =>
      serially('send', () => send(txnLease, topic, records, deadline, prepare)),
    settle: settler.settle,
  };
}

/**
 * Settles earlier transactions (core/publish/txn-settle.ts) without a lease of its own: the
 * lookup route and the audit use it as it is, the sender through `fenceOwn` (its own producer of
 * the id fences itself; undefined: a throwaway producer does).
 */
export function createTxnSettler(
  kafka: Kafka,
  options: Pick<TxnSenderOptions, 'transactionTimeoutMs' | 'requestTimeoutMs' | 'log'> & {
    /** The settling read's consumer group is `<groupPrefix>-<random>` (its grants name it). */
    readonly groupPrefix?: string;
  },
  fenceOwn: (mark: TxnMark, deadline: Deadline) => Promise<void> | undefined = () => undefined,
): TxnSettler {
  async function fence(mark: TxnMark, deadline: Deadline) {
    const own = fenceOwn(mark, deadline);
    if (own !== undefined) return own;
    const once = createTransactionalProducer(kafka, {
      txnId: mark.txnId,
      transactionTimeoutMs: options.transactionTimeoutMs,
      requestTimeoutMs: options.requestTimeoutMs,
      log: options.log,
    });
    try {
      await once.fence(deadline);
    } finally {
      await once.close().catch(() => {});
    }
  }
  return {
    async settle(topic, mark, expected, deadline, settleOptions) {
      // Initialised again, the id's earlier transaction is final: a prepared commit completes,
      // anything else aborts.
      if (settleOptions?.fence !== false) await fence(mark, deadline);
      const offsets = mark.offsets ?? [];
      if (mark.state !== 'PREPARED' || offsets.length === 0) return 'NOT_COMMITTED';
      // Without a fence the read waits at the last stable offset while the transaction is open.
      const group = `${options.groupPrefix ?? 'tally-settle'}-${randomBytes(6).toString('hex')}`;
      const seen = await readCommitted(kafka, topic, offsets, deadline, group);
      const visible = offsets.filter(({ seq, partition, offset }) => {
        const there = seen.get(`${partition}:${offset}`);
        return there?.stream === expected.stream && there.seq === String(seq);
      }).length;
      if (visible === offsets.length) return 'COMMITTED';
      if (visible === 0) return 'NOT_COMMITTED';
      throw new DependencyFailedError(
        `transaction ${mark.txnId}: ${visible} of its ${offsets.length} records are visible to read_committed consumers, which one transaction cannot be`,
      );
    },
  };
}

/**
 * The `tally.stream` and `tally.seq` of the records at `places` that a read_committed consumer
 * sees (kafkajs's readUncommitted: false), by `partition:offset`. A batch of aborted records only
 * (or of control records) reaches no handler of kafkajs's, only its END_BATCH_PROCESS event, which
 * also moves the read on: each partition is read until past the last offset asked for.
 */
async function readCommitted(
  kafka: Kafka,
  topic: string,
  places: ReadonlyArray<{ readonly partition: number; readonly offset: string }>,
  deadline: Deadline,
  groupId: string,
): Promise<Map<string, { stream: string | undefined; seq: string | undefined }>> {
  const from = new Map<number, number>();
  const until = new Map<number, number>();
  for (const { partition, offset } of places) {
    const at = Number(offset);
    from.set(partition, Math.min(from.get(partition) ?? at, at));
    until.set(partition, Math.max(until.get(partition) ?? at + 1, at + 1));
  }
  const next = new Map(from);
  const seen = new Map<string, { stream: string | undefined; seq: string | undefined }>();
  const headers = createHeaderReader();
  const consumer = kafka.consumer({
    groupId,
    readUncommitted: false,
    maxWaitTimeInMs: 100,
  });
  const seekAll = () => {
    for (const [partition, offset] of from) {
      try {
        consumer.seek({ topic, partition, offset: String(offset) });
      } catch {
        // Not joined yet: the next GROUP_JOIN seeks again.
      }
    }
  };
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new DependencyUnavailableError(
              `reading ${topic} read_committed at a transaction's offsets did not finish before the deadline; retry`,
              { retryAfterSeconds: 1 },
            ),
          ),
        deadline.remainingMs(),
      );
      const advance = (partition: number, to: number) => {
        if (!until.has(partition) || to <= (next.get(partition) ?? 0)) return;
        next.set(partition, to);
        if ([...until].every(([p, end]) => (next.get(p) ?? 0) >= end)) {
          clearTimeout(timer);
          resolve();
        }
      };
      consumer.on(consumer.events.GROUP_JOIN, seekAll);
      consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
        if (payload.topic === topic && payload.lastOffset !== undefined) {
          advance(payload.partition, Number(payload.lastOffset) + 1);
        }
      });
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        if (payload.restart) return;
        clearTimeout(timer);
        reject(payload.error);
      });
      consumer
        .run({
          autoCommit: false,
          eachMessage: async ({ partition, message }) => {
            const tally = headers(message.headers as Record<string, unknown>);
            seen.set(`${partition}:${message.offset}`, {
              stream: tally['tally.stream'],
              seq: tally['tally.seq'],
            });
            advance(partition, Number(message.offset) + 1);
          },
        })
        .then(seekAll)
        .catch((error: unknown) => {
          clearTimeout(timer);
          reject(error);
        });
    });
  } finally {
    await consumer.disconnect().catch(() => {});
  }
  return seen;
}
