import type { Deadline } from './deadline.js';
import type { RecordOutcome } from './outcomes.js';

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

export interface SequenceAllocator {
  /** Reserves `count` consecutive numbers of `stream` atomically; returns the first. */
  allocate(stream: string, count: number): Promise<number>;
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
}

export interface Ledger {
  write(block: LedgerBlock): Promise<void>;
  /** The block holding `seq`, if any. */
  find(stream: string, seq: number): Promise<LedgerBlock | undefined>;
  /** Every block of a stream in seq order, handed over a page at a time (the audit reads all). */
  forEachBlock(stream: string, onBlock: (block: LedgerBlock) => void): Promise<void>;
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

export interface Reservations {
  get(idempotencyKey: string): Promise<Reservation | undefined>;
  /** Stores it unless the key already has one; returns the one that is stored. */
  putIfAbsent(reservation: Reservation): Promise<Reservation>;
}
