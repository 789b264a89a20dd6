import type { LedgerBlock, StreamCounter } from '../publish/ports.js';
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
// Safety without transactions: a VOID is written one seq at a time, in ascending order, each only
// where no block starts at that seq, and a publisher's first ledger write is refused where a VOID
// starts at its first seq. Every allocation inside a hole starts at one of the hole's seqs, so
// whichever of the two writes lands first there wins: if the publisher's, the audit stops voiding
// that hole; if the audit's, the publisher sends nothing. No seq is both VOID and in the log.

export interface SeqFatePorts {
  readonly counter: StreamCounter;
  readonly ledger: {
    /** Both write only where no block starts at the block's first seq: false otherwise. */
    void(block: LedgerBlock): Promise<boolean>;
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

/** How many VOID items one run writes at most, over all streams (the rest waits for the next). */
export const MAX_VOID_WRITES = 1000;

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
    private readonly maxWrites = MAX_VOID_WRITES,
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
    let budget = this.maxWrites;
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
        for (let seq = from; seq <= Math.min(to, oldUpTo) && budget > 0; seq++) {
          const inLog = log.seen(stream, seq);
          if (inLog === undefined || (!inLog && !log.complete)) continue; // cannot tell yet
          budget--;
          const block = { stream, firstSeq: seq, topic, session: '', idempotencyKey: undefined };
          const written = inLog
            ? await ports.ledger.fill({
                ...block,
                outcomes: [{ status: 'UNKNOWN', message: FOUND }],
              })
            : await ports.ledger.void({
                ...block,
                outcomes: [{ status: 'VOID', message: MESSAGE }],
              });
          if (!written) break; // A publisher got there first: this hole is its block now.
          (inLog ? found : voided).add(seq);
        }
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
