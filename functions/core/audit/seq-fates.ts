import { type LedgerBlock, MAX_VOID_RANGE_SEQS, type StreamCounter } from '../publish/ports.js';
import { type SeqRange, SeqRanges } from './seq-ranges.js';

// Every seq accounted for: for each stream, every seq from 1 to its counter has exactly one fate
// in the ledger. A seq with none is a hole — an allocation applied but never answered, a request
// that died before its first ledger write, a lease's unused rest, or a record sent to the stream's
// home topic whose ledger write after the send never landed (core/publish/publisher.ts: such a request
// ends within the horizon of its allocation). Once older than the horizon nothing can send it any
// more: the audit of the home topic looks for it in the log it has read — found, it is recorded
// UNKNOWN (settled to ACKED with its place by the UNKNOWN rules); not found, VOID. Holes of a
// stream whose home is another topic are left to that topic's audit.
//
// VOID ranges: a run of unsent seqs in a hole is recorded as one ledger item (up to
// MAX_VOID_RANGE_SEQS seqs), so one write gives a whole hole its fate whatever its size. Safety
// without transactions (adapters/dynamodb/ledger.ts has the argument): the range is written only
// where no block starts at its first seq, and a block found starting inside it afterwards ends
// it; a publisher's first ledger write is refused where a VOID starts at its first seq, and looks
// for a range holding its seqs after it lands. No seq is both VOID and in the log.

export interface SeqFatePorts {
  readonly counter: StreamCounter;
  readonly ledger: {
    /** Seqs voided from the block's first (a block found inside ends the range; 0: one there). */
    void(block: LedgerBlock): Promise<number>;
    /** Writes only where no block starts at the block's first seq: false otherwise. */
    fill(block: LedgerBlock): Promise<boolean>;
    /** Seqs below `keptFrom` are past the ledger's retention: expired, not holes. */
    retention?(
      stream: string,
      counter: { readonly lastSeq: number; readonly updatedAt: number },
    ): Promise<{ readonly keptFrom: number }>;
  };
}

/** What the audit knows of the log it read, to tell a sent hole from an unsent one. */
export interface SeenInLog {
  /** The whole log was read up to this run's end offsets: absence means something. */
  readonly complete: boolean;
  /** Whether a copy of the seq was read; undefined when it cannot say (folded detail). */
  seen(stream: string, seq: number): boolean | undefined;
}

/** A stream's fates, as the audit reports them. */
export interface SeqFateFigures {
  /** The stream's counter: seqs 1..allocated were handed out. */
  readonly allocated: number;
  /** Seqs the ledger holds VOID (allocated, never sent), including those voided by this run. */
  readonly void: number;
  /** Holes this run recorded VOID. */
  readonly voidedNow: number;
  /** Holes this run found in the log and recorded UNKNOWN (settled on the next run). */
  readonly foundNow?: number;
  /** Seqs with no fate yet: younger than the horizon (their request may still write), or left
   * for the next run. */
  readonly unrecorded: readonly SeqRange[];
}

/**
 * Ledger writes one run makes at most to give holes a fate, over all streams (the rest waits for
 * the next run): one per VOID range (a hole, or MAX_VOID_RANGE_SEQS of it), one per seq found in
 * the log. 10,000 ranges hold every hole of 10,000 leases left unused between two runs.
 */
export const MAX_FATE_WRITES = 10_000;

const MESSAGE = 'allocated, never recorded, older than the audit horizon: never sent';
const FOUND = 'allocated and sent, its outcome never recorded: found in the log by the audit';

/** Collects what the ledger covers while the audit reads it, then voids old holes. */
export class SeqFates {
  readonly #covered = new Map<string, SeqRanges>();
  readonly #void = new Map<string, number>();
  /** Highest seq known to be allocated before the horizon: below a block written before it. */
  readonly #oldUpTo = new Map<string, number>();

  /** `horizonAt`: holes allocated before this time (ms) are judged. */
  constructor(
    private readonly horizonAt: number,
    private readonly maxWrites = MAX_FATE_WRITES,
  ) {}

  /** Every block of the stream, whatever its topic: a seq is a hole only if no topic used it. */
  addBlock(block: LedgerBlock): void {
    const { stream, firstSeq, outcomes } = block;
    const covered = this.#covered.get(stream) ?? new SeqRanges();
    this.#covered.set(stream, covered);
    if (outcomes.length > 0) covered.addRange(firstSeq, firstSeq + outcomes.length - 1);
    const voided = outcomes.filter((o) => o.status === 'VOID').length;
    if (voided > 0) this.#void.set(stream, (this.#void.get(stream) ?? 0) + voided);
    // Seqs are handed out in order, and a block is written after its own allocation: every seq
    // below a block written before the horizon was allocated before it too.
    if (block.writtenAt !== undefined && block.writtenAt < this.horizonAt) {
      this.#oldUpTo.set(stream, Math.max(this.#oldUpTo.get(stream) ?? 0, firstSeq - 1));
    }
  }

  /** A stream's fates from what the audit carries of its ledger (every block, read or not). */
  addView(
    stream: string,
    view: { covered: SeqRanges; voided: SeqRanges; oldUpTo(horizonAt: number): number },
  ): void {
    this.#covered.set(stream, view.covered.clone());
    this.#void.set(stream, view.voided.count);
    this.#oldUpTo.set(stream, view.oldUpTo(this.horizonAt));
  }

  /** Voids the holes older than the horizon; the figures of each stream. */
  async settle(
    ports: SeqFatePorts,
    topic: string,
    streams: Iterable<string>,
    log: SeenInLog,
  ): Promise<Map<string, SeqFateFigures>> {
    const figures = new Map<string, SeqFateFigures>();
    const budget = { left: this.maxWrites };
    for (const stream of streams) {
      const counter = await ports.counter.read(stream);
      const allocated = counter?.lastSeq ?? 0;
      const oldUpTo =
        counter !== undefined && counter.updatedAt < this.horizonAt
          ? allocated
          : Math.min(allocated, this.#oldUpTo.get(stream) ?? 0);
      const covered = this.#covered.get(stream) ?? new SeqRanges();
      // A block past the ledger's retention is gone: its seqs are not holes to judge again.
      const keptFrom =
        counter && ports.ledger.retention
          ? (await ports.ledger.retention(stream, counter)).keptFrom
          : 1;
      const holes = allocated >= keptFrom ? covered.gapsWithin(keptFrom, allocated) : [];
      const voided = new SeqRanges();
      const found = new SeqRanges();
      // Only the home topic's audit can have read a hole's record, if it was sent at all.
      const judge = counter?.homeTopic === undefined || counter.homeTopic === topic;
      for (const [from, to] of judge ? holes : []) {
        await settleHole(ports, { stream, topic, from, to: Math.min(to, oldUpTo) }, log, budget, {
          voided,
          found,
        });
      }
      figures.set(stream, {
        allocated,
        void: (this.#void.get(stream) ?? 0) + voided.count,
        voidedNow: voided.count,
        ...(found.count > 0 && { foundNow: found.count }),
        unrecorded: SeqRanges.from(holes).difference(voided).difference(found).ranges(),
      });
    }
    return figures;
  }
}

interface Hole {
  readonly stream: string;
  readonly topic: string;
  readonly from: number;
  readonly to: number;
}

/**
 * Gives the old seqs of one hole their fates, lowest first: each run of seqs absent from the
 * log is one VOID range (per MAX_VOID_RANGE_SEQS), each seq found in it an UNKNOWN block. Stops
 * at a block a publisher wrote meanwhile (the next run reads it), or when the budget is spent.
 */
async function settleHole(
  ports: SeqFatePorts,
  { stream, topic, from, to }: Hole,
  log: SeenInLog,
  budget: { left: number },
  into: { readonly voided: SeqRanges; readonly found: SeqRanges },
): Promise<void> {
  const block = (firstSeq: number, n: number, status: 'VOID' | 'UNKNOWN') => ({
    stream,
    firstSeq,
    topic,
    session: '',
    idempotencyKey: undefined,
    outcomes: Array.from({ length: n }, () =>
      status === 'VOID' ? { status, message: MESSAGE } : { status, message: FOUND },
    ),
  });
  for (let seq = from; seq <= to && budget.left > 0; ) {
    const inLog = log.seen(stream, seq);
    if (inLog === undefined || (!inLog && !log.complete)) {
      seq++; // cannot tell yet
      continue;
    }
    budget.left--;
    if (inLog) {
      if (!(await ports.ledger.fill(block(seq, 1, 'UNKNOWN')))) return; // a publisher's now
      into.found.add(seq);
      seq++;
      continue;
    }
    let end = seq;
    while (end < to && end - seq + 1 < MAX_VOID_RANGE_SEQS && log.seen(stream, end + 1) === false)
      end++;
    const voided = await ports.ledger.void(block(seq, end - seq + 1, 'VOID'));
    if (voided > 0) into.voided.addRange(seq, seq + voided - 1);
    if (voided < end - seq + 1) return; // A publisher got there first: that block is its own.
    seq = end + 1;
  }
}
