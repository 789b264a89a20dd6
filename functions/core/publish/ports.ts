import type { Deadline } from '../shared/deadline.js';
import type { TallyError } from '../shared/errors.js';
import type { RecordOutcome } from '../shared/outcomes.js';
import type { LedgerRetention } from './ledger-layout.js';
import type { RecordInput } from './record.js';

// What the publish core needs from the outside world. Adapters implement these; unit tests pass
// fakes.

export interface TopicDescription {
  readonly partitions: number;
  /** The topic's max.message.bytes. */
  readonly maxMessageBytes: number;
}

export interface TopicCatalog {
  /** undefined when the topic does not exist. Bounded by the deadline. */
  describe(topic: string, deadline: Deadline): Promise<TopicDescription | undefined>;
}

/** A record ready for the wire: partition chosen, headers stamped. */
export interface OutgoingRecord {
  readonly partition: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, Buffer | Buffer[]>>;
  readonly timestamp: number;
}

export interface RecordSender {
  /** The producer session that will most likely send the next records. */
  session(): Promise<string>;
  /**
   * Sends and returns one outcome per record, in order, and the session that sent them (it
   * stamps `tally.session`). Never rejects for Kafka errors; never outlives the deadline.
   */
  send(
    topic: string,
    records: readonly OutgoingRecord[],
    deadline: Deadline,
  ): Promise<{ readonly session: string; readonly outcomes: readonly RecordOutcome[] }>;
}

/** Seqs handed out to one request. */
export interface Allocation {
  readonly firstSeq: number;
  /**
   * The topic the stream's first allocation was for, set once on its counter (undefined on a
   * counter older than it). Only seqs sent to this topic may go out before any ledger write: its
   * audit is the one that looks for them in the log before voiding a hole.
   */
  readonly homeTopic: string | undefined;
  /** When the counter handed these seqs out (epoch ms, taken before the call). */
  readonly allocatedAt: number;
}

export interface SequenceAllocator {
  /**
   * Reserves `count` consecutive numbers of `stream` for a request to `topic`. Retries within the
   * deadline without spending a second block when an earlier attempt was applied.
   */
  allocate(stream: string, count: number, topic: string, deadline: Deadline): Promise<Allocation>;
}

/** How far a stream's seqs were allocated: every seq 1..lastSeq must have one fate. */
export interface StreamCounter {
  /** undefined when the stream has never allocated. `updatedAt`: its last allocation (epoch ms). */
  read(
    stream: string,
    deadline?: Deadline,
  ): Promise<
    | { readonly lastSeq: number; readonly updatedAt: number; readonly homeTopic?: string }
    | undefined
  >;
}

/** A contiguous run of a stream's sequence numbers and what happened to each. */
export interface LedgerBlock {
  readonly stream: string;
  readonly firstSeq: number;
  readonly topic: string;
  readonly session: string;
  readonly idempotencyKey: string | undefined;
  readonly outcomes: readonly RecordOutcome[];
  /** When the block was last written (epoch ms), when read back from the store. */
  readonly writtenAt?: number;
  /**
   * Which write of the block this is, when read back from the store: every write sets a new one,
   * and a write `over` it lands only while it is still the block's latest ('' for a block
   * written before versions existed).
   */
  readonly version?: string;
  /**
   * A VOID range the audit has written and not yet checked for a block that landed inside it
   * (adapters/dynamodb/ledger.ts): not final until an audit confirms it (Ledger.confirmVoid).
   */
  readonly pending?: true;
  /** A transactional request's block (docs/transactions.md): the id, lease and state it was sent in. */
  readonly txn?: TxnMark;
}

/** Where each record of a transaction was written, in the block's order. */
export type TxnOffsets = ReadonlyArray<{ readonly partition: number; readonly offset: string }>;

/**
 * What the ledger says of a block sent in a Kafka transaction. SENDING: written before the send
 * (the commit not asked for: it can only end aborted once the id is initialised again).
 * PREPARED: every record acknowledged at `offsets`, written before EndTxn; the commit may have
 * happened. COMMITTED, ABORTED: settled (the outcomes say ACKED, NOT_SENT).
 */
export interface TxnMark {
  readonly txnId: string;
  /** The lease's generation in the pool (core/publish/txn-id-pool.ts). */
  readonly generation: number;
  readonly state: 'SENDING' | 'PREPARED' | 'COMMITTED' | 'ABORTED';
  /** PREPARED only: the place of each record the transaction sent, by its seq. */
  readonly offsets?: ReadonlyArray<{
    readonly seq: number;
    readonly partition: number;
    readonly offset: string;
  }>;
}

/** The id a transactional request sends under, leased by its container. */
export interface TxnLease {
  readonly txnId: string;
  readonly generation: number;
}

/** What one transaction ended as, as far as its sender knows. */
export type TxnSendOutcome =
  | { readonly status: 'COMMITTED'; readonly offsets: TxnOffsets }
  /** Not committed, for certain: no read_committed consumer sees any of its records. */
  | { readonly status: 'NOT_COMMITTED'; readonly message: string }
  /** EndTxn(commit) went out with no definite answer: committed at `offsets`, or not at all. */
  | { readonly status: 'IN_DOUBT'; readonly message: string; readonly offsets: TxnOffsets };

/** Makes an earlier transaction final (adapters/kafka/txn-sender.ts), for a retry, lookup or audit. */
export interface TxnSettler {
  /**
   * Makes an earlier transaction final and says which: with `fence` (the default) initialises
   * `mark.txnId` again first (a prepared commit completes, anything else aborts); then, for a
   * PREPARED mark, reads each offset with read_committed (which cannot pass an open
   * transaction): COMMITTED when every record there is visible with its `tally.stream` and
   * `tally.seq`, NOT_COMMITTED when none is. A SENDING mark is NOT_COMMITTED. A read not done by
   * the deadline rejects with DependencyUnavailableError.
   */
  settle(
    topic: string,
    mark: TxnMark,
    expected: { readonly stream: string },
    deadline: Deadline,
    options?: { readonly fence?: boolean },
  ): Promise<'COMMITTED' | 'NOT_COMMITTED'>;
}

/** Kafka transactions (adapters/kafka/txn-sender.ts): one per request, ids leased from a pool. */
export interface TransactionalSender extends TxnSettler {
  /** The id the next transaction goes under (leased, renewed; initialised first after a take-over). */
  lease(deadline: Deadline): Promise<TxnLease>;
  /**
   * Sends `records` in one transaction under `lease`. Once every record is acknowledged,
   * `prepare(offsets)` runs; EndTxn(commit) is sent only if it resolves before the deadline,
   * otherwise the transaction is aborted. Never rejects for Kafka errors.
   */
  send(
    lease: TxnLease,
    topic: string,
    records: readonly OutgoingRecord[],
    deadline: Deadline,
    prepare: (offsets: TxnOffsets) => Promise<void>,
  ): Promise<TxnSendOutcome>;
}

/**
 * What a conditional ledger write expects to replace: the version its writer opened or read,
 * or 'absent' (no block starts at its first seq yet).
 */
export type LedgerVersion = string | 'absent';

/**
 * Most seqs one VOID item holds: a publisher's open looks this far below its first seq for a
 * range holding it. 10,000 VOID outcomes are ~800 KB of JSON, a few KB gzipped.
 */
export const MAX_VOID_RANGE_SEQS = 10_000;

export interface Ledger {
  /**
   * Writes the block and returns the version written. With `over`, only while the block is
   * still that version (or absent): a write that lost its place — an attempt past its deadline
   * whose write lands after its retry opened the block, an audit settling what a retry reopened
   * since it read it — returns undefined and changes nothing. Without `over`, whatever is there.
   */
  write(block: LedgerBlock, deadline?: Deadline, over?: LedgerVersion): Promise<string | undefined>;
  /**
   * A request's first write of its block, before sending, whatever an earlier attempt left:
   * refused ('voided') when the audit has marked the block's first seq VOID, so a voided seq is
   * never sent. Its version is what the request's later writes expect.
   */
  open(
    block: LedgerBlock,
    deadline: Deadline,
    /**
     * The earliest time (ms) the audit may judge the block's seqs (their allocation plus the
     * horizon, less clock skew): a VOID range holding them is written after it. Undefined: any.
     */
    judgedFrom?: number,
  ): Promise<{ readonly version: string } | 'voided'>;
  /**
   * Records a range of VOID outcomes (at most MAX_VOID_RANGE_SEQS) as one item, unless a block
   * already starts at its first seq (a publisher's, or an earlier VOID): 0 then, and nothing is
   * written. A block found starting inside the range ends it: returns how many seqs, from the
   * first, are VOID now. The range is written pending and confirmed after that look: a range
   * still pending (its audit stopped in between) is confirmed by the next audit that reads it.
   */
  void(block: LedgerBlock, deadline?: Deadline): Promise<number>;
  /**
   * Checks a pending VOID range read back from the store for blocks that landed inside it, ends
   * it before the first (or takes it back when one starts at its first seq) and clears its mark:
   * how many seqs, from the first, are VOID now.
   */
  confirmVoid?(range: LedgerBlock, deadline?: Deadline): Promise<number>;
  /**
   * Records a block the audit found in the log with no ledger block (UNKNOWN, settled by the
   * UNKNOWN rules), unless a block already starts at its first seq: false then.
   */
  fill(block: LedgerBlock, deadline?: Deadline): Promise<boolean>;
  /** The block holding `seq`, if any (none once it is past the ledger's retention). */
  find(stream: string, seq: number, deadline?: Deadline): Promise<LedgerBlock | undefined>;
  /**
   * What the retention has taken of the stream (core/publish/ledger-layout.ts), judged with its
   * counter when given. Absent: the store keeps every block for ever.
   */
  retention?(
    stream: string,
    counter?: { readonly lastSeq: number; readonly updatedAt: number },
  ): Promise<LedgerRetention>;
  /**
   * Every block of a stream, handed over a page at a time (the audit reads all); a block
   * rewritten in another layout (adapters/dynamodb/ledger.ts) after its older copy.
   */
  forEachBlock(stream: string, onBlock: (block: LedgerBlock) => void): Promise<void>;
  /** The blocks written or rewritten at or after `since` (ms), in any order (the audit's reads). */
  forEachChangedBlock?(
    stream: string,
    since: number,
    onBlock: (block: LedgerBlock) => void,
  ): Promise<void>;
}

/** Sequence numbers bound to an Idempotency-Key, so a retry reuses them. */
export interface Reservation {
  readonly idempotencyKey: string;
  readonly fingerprint: string;
  readonly stream: string;
  readonly topic: string;
  readonly firstSeq: number;
  readonly count: number;
  /** The first attempt's time: records without a timestamp of their own keep it on retries. */
  readonly timestamp: number;
}

/**
 * One item per Idempotency-Key: the reservation (its seqs), the lock (a request is working on
 * it until `lockedUntil`, its deadline) and, once every outcome is final, the stored answer.
 */
export interface KeyedPublish extends Reservation {
  /** Epoch ms until which a request holds the key; 0 when none does. */
  readonly lockedUntil: number;
  /** The answer every retry gets, once stored (only final outcomes are stored). */
  readonly answer?: unknown;
}

export interface KeyedPublishes {
  get(idempotencyKey: string, deadline?: Deadline): Promise<KeyedPublish | undefined>;
  /**
   * Stores it (locked) unless the key already has an item; returns the one that is stored. One
   * conditional put; a lost race costs one read more.
   */
  claim(item: KeyedPublish, deadline: Deadline): Promise<KeyedPublish>;
  /**
   * Takes the lock of a key whose item has no answer and whose lock is the one seen
   * (`seenUntil`, expired or 0): false when another request took it or answered first.
   */
  lock(
    idempotencyKey: string,
    seenUntil: number,
    until: number,
    deadline: Deadline,
  ): Promise<boolean>;
  /**
   * Ends the request holding the lock `heldUntil`: stores `answer` when given (the key then
   * replays it), else only releases the lock so a retry may run now. False when the lock was no
   * longer this request's.
   */
  finish(
    idempotencyKey: string,
    heldUntil: number,
    answer: unknown,
    deadline?: Deadline,
  ): Promise<boolean>;
}

export interface PublishRequest {
  readonly topic: string;
  readonly stream: string;
  readonly idempotencyKey: string | undefined;
  /** Parsed records, or why a record could not be parsed (reported in its place). */
  readonly records: ReadonlyArray<RecordInput | TallyError>;
  readonly deadline: Deadline;
  readonly now: number;
  /** `fingerprint(request)`, when the caller has already computed it (it hashes every record). */
  readonly fingerprint?: string;
  /** Send the records in one Kafka transaction (PublisherPorts.transactions). */
  readonly transactional?: boolean;
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
  /** With `peek` and `giveBack` when it leases seqs (core/publish/seq-leases.ts). */
  readonly allocator: SequenceAllocator & {
    peek?(stream: string, count: number, deadline: Deadline): boolean;
    giveBack?(stream: string, allocation: Allocation, count: number): void;
  };
  /**
   * The audit's horizon (ms): a seq allocated this long ago may be judged by the audit. A request
   * ending within it may send its seqs before any ledger write (see the plan below).
   */
  readonly auditHorizonMs: number;
  readonly ledger: Ledger;
  readonly keyed: KeyedPublishes;
  readonly allowTopic: (topic: string) => boolean;
  /** Transactional publish; absent when no id pool is configured. */
  readonly transactions?: TransactionalSender;
}

/** What a transport makes of a result: its answer, and whether every outcome in it is final. */
export type Shape<T> = (result: PublishResult) => { readonly answer: T; readonly settled: boolean };

export interface Answered<T> {
  readonly answer: T;
  /** The key's stored answer, given again: nothing was sent or written. */
  readonly replayed: boolean;
  /** Problems that did not change any record's outcome (a write after the send failed). */
  readonly warnings: readonly string[];
}
