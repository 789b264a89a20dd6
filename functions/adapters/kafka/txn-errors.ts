import { DeadlineExceeded } from '../../core/shared/deadline.js';
import { TallyError } from '../../core/shared/errors.js';

// What a failed transaction means for its records (issue 33). A transaction whose commit was never
// asked for can only end aborted: its records are never visible to read_committed consumers,
// whatever the log holds (NOT_COMMITTED). Once EndTxn(commit) has gone out, only the
// coordinator's refusal of it says "not committed"; no answer, or an answer that does not rule a
// commit out, leaves the transaction IN_DOUBT until the id is initialised again (which completes
// a commit the coordinator prepared, or aborts the transaction), and a read_committed read of the
// records' offsets says which.

export type TxnFailureReason =
  /** A newer producer initialised the id (INVALID_PRODUCER_EPOCH, PRODUCER_FENCED). */
  | 'FENCED'
  /** The coordinator still finished an earlier transaction of the id past every retry. */
  | 'CONCURRENT_TRANSACTIONS'
  /** No transaction coordinator answered (moved, stopped, loading). */
  | 'COORDINATOR_UNAVAILABLE'
  /** EndTxn(commit) went out and no answer came in time. */
  | 'COMMIT_TIMEOUT'
  /** The request's deadline came first. */
  | 'DEADLINE'
  /** A record send failed (its partition's leader, a refusal). */
  | 'SEND_FAILED';

type Places = ReadonlyArray<{ readonly partition: number; readonly offset: string }>;

interface TxnErrorOptions {
  readonly reason: TxnFailureReason;
  readonly txnId: string;
  readonly cause?: unknown;
  /** Where the records were written, in order (none when not every send was acknowledged). */
  readonly offsets?: Places;
}

abstract class TransactionFailure extends TallyError {
  readonly retriable = true;
  readonly reason: TxnFailureReason;
  readonly txnId: string;
  readonly offsets: Places;
  constructor(message: string, options: TxnErrorOptions, retryAfterSeconds?: number) {
    super(
      message,
      retryAfterSeconds === undefined
        ? { cause: options.cause }
        : { cause: options.cause, retryAfterSeconds },
    );
    this.reason = options.reason;
    this.txnId = options.txnId;
    this.offsets = options.offsets ?? [];
  }
}

/** Not committed, for certain: no read_committed consumer will see any record of it (503). */
export class TransactionNotCommittedError extends TransactionFailure {
  readonly code = 'TRANSACTION_NOT_COMMITTED';
  readonly status = 503;
  constructor(message: string, options: TxnErrorOptions) {
    super(
      `${message}: the transaction was not committed, no read_committed consumer sees its records`,
      options,
      1,
    );
  }
}

/**
 * The commit was asked for and its answer does not say whether it happened (500). `offsets`: where
 * the records were written, each visible to read_committed consumers if the commit happened.
 */
export class TransactionInDoubtError extends TransactionFailure {
  readonly code = 'TRANSACTION_IN_DOUBT';
  readonly status = 500;
  constructor(message: string, options: TxnErrorOptions) {
    super(
      `${message}: the commit may or may not have happened; initialising ${options.txnId} again settles it`,
      options,
    );
  }
}

/** Kafka's error type (INVALID_PRODUCER_EPOCH…) or kafkajs's error name, through its wrappers. */
export function kafkaErrorType(error: unknown): string {
  let current = error as { type?: string; name?: string; cause?: unknown } | undefined;
  for (let depth = 0; depth < 5 && current?.cause && typeof current.cause === 'object'; depth++) {
    current = current.cause as typeof current;
  }
  return current?.type ?? current?.name ?? 'UNKNOWN_ERROR';
}

const FENCED = new Set(['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED']);
const NO_COORDINATOR = new Set([
  'NOT_COORDINATOR',
  'COORDINATOR_NOT_AVAILABLE',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR_FOR_GROUP',
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
]);

/** Why a step of a transaction failed, as far as the error says. */
export function reasonOf(error: unknown, commitSent: boolean): TxnFailureReason {
  if (error instanceof DeadlineExceeded) return commitSent ? 'COMMIT_TIMEOUT' : 'DEADLINE';
  const type = kafkaErrorType(error);
  if (FENCED.has(type)) return 'FENCED';
  if (type === 'CONCURRENT_TRANSACTIONS') return 'CONCURRENT_TRANSACTIONS';
  if (NO_COORDINATOR.has(type)) return 'COORDINATOR_UNAVAILABLE';
  return commitSent ? 'COMMIT_TIMEOUT' : 'SEND_FAILED';
}

/**
 * Whether the coordinator's answer to EndTxn(commit) rules the commit out. Only a fenced epoch
 * does: the coordinator refuses it before it looks at the transaction. COORDINATOR_NOT_AVAILABLE
 * and NOT_COORDINATOR do not: Kafka answers them also when its PrepareCommit append timed out
 * (TransactionStateManager maps REQUEST_TIMED_OUT and NOT_ENOUGH_REPLICAS to them), and that
 * append may still complete.
 */
export function commitRuledOut(error: unknown): boolean {
  return FENCED.has(kafkaErrorType(error));
}

/** The innermost error, through kafkajs's wrappers (KafkaJSNonRetriableError, retries exceeded). */
function innermost(error: unknown): { retriable?: boolean; name?: string } | undefined {
  let current = error as { cause?: unknown; retriable?: boolean; name?: string } | undefined;
  for (let depth = 0; depth < 5 && current?.cause && typeof current.cause === 'object'; depth++) {
    current = current.cause as typeof current;
  }
  return current;
}

/**
 * Whether initialising a transactional id again may succeed where this attempt failed: not past the
 * request's deadline, and not an answer Kafka marks final (an authorization failure, a transaction
 * timeout above the brokers' maximum). Connection errors, request timeouts, a coordinator moving or
 * loading, CONCURRENT_TRANSACTIONS past kafkajs's retries: yes.
 */
export function fenceMayRetry(error: unknown): boolean {
  if (error instanceof DeadlineExceeded) return false;
  return (
    innermost(error)?.retriable !== false || kafkaErrorType(error) === 'CONCURRENT_TRANSACTIONS'
  );
}
