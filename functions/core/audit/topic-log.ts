import { CountedView, type CountedViewJson } from './counted-view.js';
import { LedgerView, type LedgerViewJson } from './ledger-view.js';
import { ReceiptsView, type ReceiptsViewJson } from './receipts-view.js';
import { type FoldedRow, foldRow, type RowCounts } from './retention.js';
import { SeqCounter, SeqRanges } from './seq-ranges.js';

// What an audit has read of a topic's log so far, carried from one run to the next as a
// checkpoint: where each partition's reading stopped, and per stream the seqs seen (with how many
// copies), which time bucket each first copy the ledger does not explain fell in, and where the
// copies worth naming are. Detail older than the retention horizon is folded into totals (a
// stream's seqs up to its `floor`), so it grows with findings of that horizon — never with the
// record count or the topic's age.

export interface Placement {
  readonly partition: number;
  readonly offset: number;
  readonly session: string;
}

export interface LogRecord extends Placement {
  readonly seq: number;
  /** The record's timestamp (ms since the epoch). */
  readonly timestamp: number;
}

/** Seqs whose placements are described one by one; beyond this they are only counted. */
export const MAX_PLACED = 1000;

export function bucketOf(timestamp: number, bucketMs: number): number {
  return timestamp - (((timestamp % bucketMs) + bucketMs) % bucketMs);
}

/** Aborted copies a stream's report names (the newest); `abortedCopies` counts them all. */
export const ABORTED_NAMED = 100;

type PlacementJson = [partition: number, offset: number, session: string];

export interface StreamLogJson {
  readonly log: ReturnType<SeqCounter['toJSON']>;
  readonly buckets: Array<[start: number, seqs: Array<[number, number]>]>;
  readonly placements: Array<[seq: number, copies: PlacementJson[]]>;
  readonly spans: Array<[partition: number, first: number, last: number]>;
  /** Seqs up to this are folded into `older` (absent in checkpoints written before folding). */
  readonly floor?: number;
  readonly older?: FoldedRow;
  /** Records read after their seq was folded (a late copy: a duplicate or a late first one). */
  readonly belowFloor?: number;
  /** Copies of aborted transactions read (in the log, unseen by read_committed consumers). */
  readonly abortedCopies?: number;
  /** The newest of them (at most ABORTED_NAMED). */
  readonly aborted?: Array<[seq: number, partition: number, offset: number, session: string]>;
  /** The stream's ledger as last read (absent: the next run reads the ledger in full). */
  readonly ledger?: LedgerViewJson;
  /** The receipts folded per group (absent: the next run reads every receipt). */
  readonly receipts?: ReceiptsViewJson;
}

/** One stream's share of the log, as read so far. Mutable. */
export class StreamLog {
  readonly log: SeqCounter;
  /** Bucket start → seqs whose first copy's timestamp falls in that bucket. */
  readonly buckets: Map<number, SeqRanges>;
  /** Seq → every copy found so far, for seqs worth naming (repeats and wanted ones). */
  readonly placements: Map<number, Placement[]>;
  /** Partition → first and last offset of this stream's records there (where a lookup reads). */
  readonly spans: Map<number, [number, number]>;
  /** Seqs up to here are folded: counted in `older`, no longer in `log`, buckets or placements. */
  floor: number;
  older: FoldedRow | undefined;
  belowFloor: number;
  /** Copies of aborted transactions read so far: neither copies nor duplicates of their seqs. */
  abortedCopies: number;
  /** The newest aborted copies read, oldest first (at most ABORTED_NAMED). */
  readonly aborted: Array<Placement & { readonly seq: number }>;
  /** The ledger as read so far: checkpointed only once it is read incrementally (`since`). */
  readonly ledger: LedgerView;
  /** The receipts folded so far, per group: a run reads only those written since. */
  readonly receipts: ReceiptsView;
  /**
   * Seq → where this run found an UNKNOWN outcome's record: every one of them, not only
   * MAX_PLACED, so a single run settles them all. Not checkpointed (settled in the same run).
   */
  readonly landed = new Map<number, Placement>();

  constructor(json?: StreamLogJson) {
    this.log = json ? SeqCounter.fromJSON(json.log) : new SeqCounter();
    this.buckets = new Map(json?.buckets.map(([start, seqs]) => [start, SeqRanges.fromJSON(seqs)]));
    this.placements = new Map(
      json?.placements.map(([seq, copies]) => [
        seq,
        copies.map(([partition, offset, session]) => ({ partition, offset, session })),
      ]),
    );
    this.spans = new Map(json?.spans.map(([p, first, last]) => [p, [first, last]]));
    this.floor = json?.floor ?? 0;
    this.older = json?.older;
    this.belowFloor = json?.belowFloor ?? 0;
    this.abortedCopies = json?.abortedCopies ?? 0;
    this.aborted = (json?.aborted ?? []).map(([seq, partition, offset, session]) => ({
      seq,
      partition,
      offset,
      session,
    }));
    this.ledger = new LedgerView(json?.ledger);
    this.receipts = new ReceiptsView(json?.receipts);
  }

  /** Counts a record of an aborted transaction, apart from the log's copies. */
  addAborted(copy: Placement & { readonly seq: number }): void {
    this.abortedCopies++;
    this.aborted.push(copy);
    if (this.aborted.length > ABORTED_NAMED) this.aborted.shift();
  }

  /**
   * Counts one record and says how many times its seq was seen before. Its placement is kept
   * when its seq was seen before (a copy to name) or when it is `unknown` (an UNKNOWN outcome to
   * settle), up to MAX_PLACED seqs; every unknown one is also kept in `landed`.
   */
  add(record: LogRecord, bucketMs: number, unknown: boolean): number {
    const { seq } = record;
    this.#span(record);
    if (seq <= this.floor) {
      this.belowFloor++;
      return 0;
    }
    if (unknown && !this.landed.has(seq)) {
      const { partition, offset, session } = record;
      this.landed.set(seq, { partition, offset, session });
    }
    const before = this.log.addOne(seq);
    if (before === 0) {
      const start = bucketOf(record.timestamp, bucketMs);
      const bucket = this.buckets.get(start);
      if (bucket === undefined) this.buckets.set(start, new SeqRanges().add(seq));
      else bucket.add(seq);
    }
    if (before > 0 || unknown) this.place(seq, record);
    return before;
  }

  #span({ partition, offset }: Placement): void {
    const span = this.spans.get(partition);
    if (span === undefined) this.spans.set(partition, [offset, offset]);
    else {
      if (offset < span[0]) span[0] = offset;
      if (offset > span[1]) span[1] = offset;
    }
  }

  /** Forgets which bucket `produced` seqs fell in: the ledger's time places those. */
  forgetProduced(produced: SeqRanges): void {
    for (const [start, seqs] of this.buckets) {
      const rest = seqs.difference(produced);
      if (rest.isEmpty) this.buckets.delete(start);
      else this.buckets.set(start, rest);
    }
  }

  /** Folds every seq up to `floor` into `older` as `row` (the counts of those seqs). */
  foldThrough(floor: number, row: RowCounts, since: number, until: number): void {
    if (floor <= this.floor) return;
    this.older = foldRow(this.older, row, since, until);
    this.log.dropThrough(floor);
    for (const [start, seqs] of this.buckets) {
      // Most buckets lie wholly above the floor: kept as they are.
      if ((seqs.min as number) > floor) continue;
      const rest = seqs.above(floor);
      if (rest.isEmpty) this.buckets.delete(start);
      else this.buckets.set(start, rest);
    }
    for (const seq of this.placements.keys()) if (seq <= floor) this.placements.delete(seq);
    this.floor = floor;
  }

  /**
   * Keeps the copies of the newest `keep` repeated seqs: single copies were kept only to settle
   * UNKNOWN outcomes (done by then), and older repeats have been reported with theirs.
   */
  prunePlacements(keep: number): void {
    const repeated = [...this.placements.keys()].filter((seq) => this.log.timesOf(seq) > 1);
    repeated.sort((a, b) => b - a);
    const kept = new Set(repeated.slice(0, keep));
    for (const seq of this.placements.keys()) if (!kept.has(seq)) this.placements.delete(seq);
  }

  /**
   * Records where a copy of `seq` is, unless already known or the described set is full. Copies
   * are kept in (partition, offset) order, so the first — where an UNKNOWN outcome is settled as
   * landed — does not depend on the order partitions were read in (or which fan-out child read it).
   */
  place(seq: number, placement: Placement): void {
    const copies = this.placements.get(seq);
    const { partition, offset, session } = placement;
    if (copies === undefined) {
      if (this.placements.size < MAX_PLACED)
        this.placements.set(seq, [{ partition, offset, session }]);
      return;
    }
    if (copies.some((c) => c.partition === partition && c.offset === offset)) return;
    const at = copies.findIndex(
      (c) => c.partition > partition || (c.partition === partition && c.offset > offset),
    );
    copies.splice(at < 0 ? copies.length : at, 0, { partition, offset, session });
  }

  toJSON(): StreamLogJson {
    return {
      log: this.log.toJSON(),
      buckets: [...this.buckets].map(([start, seqs]) => [start, seqs.toJSON()]),
      placements: [...this.placements].map(([seq, copies]) => [
        seq,
        copies.map((c): PlacementJson => [c.partition, c.offset, c.session]),
      ]),
      spans: [...this.spans].map(([p, [first, last]]) => [p, first, last]),
      floor: this.floor,
      ...(this.older ? { older: this.older } : {}),
      belowFloor: this.belowFloor,
      ...(this.abortedCopies > 0 && {
        abortedCopies: this.abortedCopies,
        aborted: this.aborted.map((c): [number, number, number, string] => [
          c.seq,
          c.partition,
          c.offset,
          c.session,
        ]),
      }),
      ...(this.ledger.since === undefined ? {} : { ledger: this.ledger.toJSON() }),
      ...(this.receipts.isEmpty ? {} : { receipts: this.receipts.toJSON() }),
    };
  }
}

export interface CheckpointJson {
  readonly version: 1;
  readonly topic: string;
  /** Partition → the next offset to read. */
  readonly next: Array<[partition: number, offset: number]>;
  readonly scanned: number;
  readonly untracked: number;
  /** Records removed from the log (retention, deleteRecords) before any audit read them. */
  readonly unread: number;
  /** Bucket start → records of any kind found there (for count-only receipts). */
  readonly topicBuckets: Array<[start: number, count: number]>;
  /** Buckets before this (ms) are folded into `olderInLog` (absent before folding). */
  readonly foldedBefore?: number;
  /** The earliest bucket folded (ms). */
  readonly foldedSince?: number;
  readonly olderInLog?: number;
  /** The count-only receipts folded per group (absent: the next run reads every one). */
  readonly counted?: CountedViewJson;
  readonly streams: Array<[stream: string, log: StreamLogJson]>;
}

/** Everything an audit has read of one topic; what its checkpoint stores. Mutable. */
export class TopicLog {
  readonly next: Map<number, number>;
  readonly streams: Map<string, StreamLog>;
  readonly topicBuckets: Map<number, number>;
  /** Records of buckets before `foldedBefore` (ms), no longer counted per bucket. */
  olderInLog: number;
  foldedBefore: number;
  foldedSince: number | undefined;
  scanned: number;
  untracked: number;
  unread: number;
  /** The count-only receipts folded so far, per group: a run reads only those written since. */
  readonly counted: CountedView;

  constructor(
    readonly topic: string,
    json?: CheckpointJson,
  ) {
    if (json !== undefined && (json.version !== 1 || json.topic !== topic)) {
      throw new TypeError(
        `checkpoint of ${String(json.topic)} v${json.version} is not for ${topic}`,
      );
    }
    this.next = new Map(json?.next);
    this.streams = new Map(json?.streams.map(([name, s]) => [name, new StreamLog(s)]));
    this.topicBuckets = new Map(json?.topicBuckets);
    this.olderInLog = json?.olderInLog ?? 0;
    this.foldedBefore = json?.foldedBefore ?? 0;
    this.foldedSince = json?.foldedSince;
    this.scanned = json?.scanned ?? 0;
    this.untracked = json?.untracked ?? 0;
    this.unread = json?.unread ?? 0;
    this.counted = new CountedView(json?.counted);
  }

  stream(name: string): StreamLog {
    let log = this.streams.get(name);
    if (log === undefined) {
      log = new StreamLog();
      this.streams.set(name, log);
    }
    return log;
  }

  countInBucket(timestamp: number, bucketMs: number): void {
    const start = bucketOf(timestamp, bucketMs);
    if (start < this.foldedBefore) this.olderInLog++;
    else this.topicBuckets.set(start, (this.topicBuckets.get(start) ?? 0) + 1);
  }

  /**
   * Folds the buckets that end by `cutoff` (ms) into `olderInLog`, and the count-only receipts'
   * buckets that end by then into their groups' totals (every one held, for an infinite cutoff).
   */
  foldBuckets(cutoff: number, bucketMs: number): void {
    if (Number.isFinite(cutoff)) this.counted.fold(bucketOf(cutoff, bucketMs));
    else this.counted.foldAll(bucketMs);
    for (const [start, count] of this.topicBuckets) {
      if (start + bucketMs > cutoff) continue;
      this.olderInLog += count;
      this.topicBuckets.delete(start);
      this.foldedBefore = Math.max(this.foldedBefore, start + bucketMs);
      this.foldedSince = Math.min(this.foldedSince ?? start, start);
    }
  }

  toJSON(): CheckpointJson {
    return {
      version: 1,
      topic: this.topic,
      next: [...this.next],
      scanned: this.scanned,
      untracked: this.untracked,
      unread: this.unread,
      topicBuckets: [...this.topicBuckets],
      foldedBefore: this.foldedBefore,
      ...(this.foldedSince === undefined ? {} : { foldedSince: this.foldedSince }),
      olderInLog: this.olderInLog,
      ...(this.counted.isEmpty ? {} : { counted: this.counted.toJSON() }),
      streams: [...this.streams].map(([name, s]) => [name, s.toJSON()]),
    };
  }
}

/**
 * The last `capacity` tracked records a scan passed, in typed arrays (~36 bytes a slot), so the
 * earlier copy of a repeat — usually a retry seconds after the original — can be named without
 * reading the log again. The arrays grow as records come, up to `capacity`: a run that reads a
 * few records (most scheduled ones) does not pay for the whole window. Not checkpointed.
 */
export class RecentRecords {
  #seqs: Float64Array;
  #offsets: Float64Array;
  #partitions: Int32Array;
  readonly #streams: Array<string | undefined> = [];
  readonly #sessions: Array<string | undefined> = [];
  #next = 0;
  #size = 0;

  constructor(readonly capacity = 200_000) {
    const initial = Math.min(capacity, 256);
    this.#seqs = new Float64Array(initial);
    this.#offsets = new Float64Array(initial);
    this.#partitions = new Int32Array(initial);
  }

  /** Doubles the typed arrays (up to `capacity`); only before the ring first wraps. */
  #grow(): void {
    const length = Math.min(this.capacity, this.#seqs.length * 2);
    const grown = <T extends Float64Array | Int32Array>(from: T, to: T): T => {
      to.set(from);
      return to;
    };
    this.#seqs = grown(this.#seqs, new Float64Array(length));
    this.#offsets = grown(this.#offsets, new Float64Array(length));
    this.#partitions = grown(this.#partitions, new Int32Array(length));
  }

  push(stream: string, seq: number, placement: Placement): void {
    const i = this.#next;
    if (i >= this.#seqs.length) this.#grow();
    this.#seqs[i] = seq;
    this.#offsets[i] = placement.offset;
    this.#partitions[i] = placement.partition;
    this.#streams[i] = stream;
    this.#sessions[i] = placement.session;
    this.#next = (i + 1) % this.capacity;
    if (this.#size < this.capacity) this.#size++;
  }

  /** Every copy of each of `seqs` of `stream` still in the window, oldest first, in one pass. */
  copiesOf(stream: string, seqs: SeqRanges): Map<number, Placement[]> {
    const found = new Map<number, Placement[]>();
    if (seqs.isEmpty) return found;
    const oldest = this.#oldest();
    for (let i = 0; i < this.#size; i++) {
      const n = (oldest + i) % this.capacity;
      const seq = this.#seqs[n] as number;
      if (this.#streams[n] !== stream || !seqs.has(seq)) continue;
      const copies = found.get(seq);
      if (copies === undefined) found.set(seq, [this.#at(n)]);
      else copies.push(this.#at(n));
    }
    return found;
  }

  /** Every copy of stream/seq still in the window, oldest first. */
  find(stream: string, seq: number): Placement[] {
    const found: Placement[] = [];
    const oldest = this.#oldest();
    for (let i = 0; i < this.#size; i++) {
      const n = (oldest + i) % this.capacity;
      if (this.#seqs[n] === seq && this.#streams[n] === stream) found.push(this.#at(n));
    }
    return found;
  }

  #oldest(): number {
    return (this.#next - this.#size + this.capacity) % this.capacity;
  }

  #at(n: number): Placement {
    return {
      partition: this.#partitions[n] as number,
      offset: this.#offsets[n] as number,
      session: this.#sessions[n] ?? '',
    };
  }
}
