import type { LedgerBlock } from '../publish/ports.js';
import type { RecordOutcome } from '../shared/outcomes.js';
import { SeqRanges } from './seq-ranges.js';

// What the audit knows of one stream's ledger, carried in its checkpoint so that a run reads
// only the blocks written (or rewritten) since the last one. Ranges, not blocks: it grows with
// gaps, UNKNOWN outcomes and time buckets within the retention — never with the record count.
// A block rewritten after it was summarized has its seqs taken out of every set and its new
// outcomes put in: blocks never overlap (one per allocation, keyed by its first seq).

/** Newest blocks whose write time is remembered to judge holes (the rest: thinned out). */
const MAX_YOUNG = 512;

type Ranges = Array<[number, number]>;

export interface LedgerViewJson {
  /** The next run reads the blocks written at or after this (ms since the epoch). */
  readonly since: number;
  /** This topic's seqs above the floor: ACKED (judged), UNKNOWN, and both. */
  readonly acked: Ranges;
  readonly unknown: Ranges;
  readonly produced: Ranges;
  /**
   * Bucket start → this topic's produced seqs whose block was written in it, flat and as
   * differences (a week of 5-minute buckets is ~2,000 of them): per bucket, its start less the
   * previous one's, its range count, then per range its first seq less the previous range's last
   * and its length less one.
   */
  readonly buckets: number[];
  /** Seqs any block holds (whatever its topic), and those VOID: the stream's fates. */
  readonly covered: Ranges;
  readonly voided: Ranges;
  /** Every seq up to here was allocated before a past run's horizon. */
  readonly oldUpTo: number;
  /** First seq − 1 and write time of blocks younger than the horizon when read. */
  readonly young: Array<[upTo: number, writtenAt: number]>;
  /** First seqs of this topic's blocks still holding an UNKNOWN outcome above the floor. */
  readonly unknownBlocks: number[];
}

const ranges = (json: Ranges | undefined) => SeqRanges.from(json ?? []);

/** One stream's ledger as the audit needs it. Mutable; StreamAudit keeps the topic's sets. */
export class LedgerView {
  since: number | undefined;
  acked: SeqRanges;
  unknown: SeqRanges;
  produced: SeqRanges;
  readonly producedBuckets: Map<number, SeqRanges>;
  covered: SeqRanges;
  voided: SeqRanges;
  #oldUpTo: number;
  /** First seq − 1 → latest write time seen of a block younger than the horizon. */
  readonly #young: Map<number, number>;
  readonly unknownBlocks: Set<number>;

  constructor(json?: LedgerViewJson) {
    this.since = json?.since;
    this.acked = ranges(json?.acked);
    this.unknown = ranges(json?.unknown);
    this.produced = ranges(json?.produced);
    this.producedBuckets = decodeBuckets(json?.buckets ?? []);
    this.covered = ranges(json?.covered);
    this.voided = ranges(json?.voided);
    this.#oldUpTo = json?.oldUpTo ?? 0;
    this.#young = new Map(json?.young);
    this.unknownBlocks = new Set(json?.unknownBlocks);
  }

  /** Forgets everything: the ledger is about to be read in full. */
  clear(): void {
    this.since = undefined;
    this.acked = new SeqRanges();
    this.unknown = new SeqRanges();
    this.produced = new SeqRanges();
    this.producedBuckets.clear();
    this.covered = new SeqRanges();
    this.voided = new SeqRanges();
    this.#oldUpTo = 0;
    this.#young.clear();
    this.unknownBlocks.clear();
  }

  /** Whether some block already held `block`'s seqs (a rewrite: take its old outcomes out). */
  isRewrite(block: LedgerBlock): boolean {
    return this.covered.has(block.firstSeq);
  }

  /** The stream-wide part of a block (any topic): which seqs have a fate, which are VOID. */
  addFates(block: LedgerBlock): void {
    const { firstSeq, outcomes } = block;
    if (outcomes.length === 0) return;
    const last = firstSeq + outcomes.length - 1;
    if (this.voided.runsWithin(firstSeq, last).length > 0)
      this.voided = this.voided.difference(SeqRanges.from([[firstSeq, last]]));
    this.covered.addRange(firstSeq, last);
    runsOf(outcomes, (status, from, to) => {
      if (status === 'VOID') this.voided.addRange(firstSeq + from, firstSeq + to);
    });
    if (block.writtenAt === undefined) return;
    const upTo = firstSeq - 1;
    // The latest write counts, as it does for a full re-read of the ledger (the store keeps only
    // a block's last write time): the earliest would judge holes below a rewritten block sooner
    // (also safe), but then a run's report would depend on whether its checkpoint was lost.
    if (upTo > this.#oldUpTo) this.#young.set(upTo, block.writtenAt);
  }

  /** Takes a rewritten block's seqs out of the topic's sets before its new outcomes go in. */
  removeSeqs(firstSeq: number, last: number): void {
    const seqs = SeqRanges.from([[firstSeq, last]]);
    const without = (set: SeqRanges) =>
      (set.max ?? 0) >= firstSeq &&
      (set.min ?? 0) <= last &&
      set.runsWithin(firstSeq, last).length > 0
        ? set.difference(seqs)
        : set;
    this.acked = without(this.acked);
    this.unknown = without(this.unknown);
    this.produced = without(this.produced);
    for (const [start, bucket] of this.producedBuckets) {
      const rest = without(bucket);
      if (rest === bucket) continue;
      if (rest.isEmpty) this.producedBuckets.delete(start);
      else this.producedBuckets.set(start, rest);
    }
  }

  /**
   * Highest seq known allocated before `horizonAt`: every seq below a block written before it
   * (seqs are handed out in order, a block written after its allocation). Blocks now older than
   * the horizon are folded into one number.
   */
  oldUpTo(horizonAt: number): number {
    for (const [upTo, writtenAt] of this.#young) {
      if (writtenAt >= horizonAt) continue;
      this.#oldUpTo = Math.max(this.#oldUpTo, upTo);
      this.#young.delete(upTo);
    }
    for (const upTo of this.#young.keys()) if (upTo <= this.#oldUpTo) this.#young.delete(upTo);
    return this.#oldUpTo;
  }

  /** Young blocks kept: those a later-written lower block does not make useless, thinned. */
  #youngJSON(): Array<[number, number]> {
    const byTime = [...this.#young].sort((a, b) => a[1] - b[1] || a[0] - b[0]);
    const kept: Array<[number, number]> = [];
    for (const entry of byTime) {
      // An entry written later with a lower seq never raises the answer: drop it.
      if (kept.length > 0 && entry[0] <= (kept[kept.length - 1] as [number, number])[0]) continue;
      kept.push(entry);
    }
    // Thinning only lowers the answer for a while (fewer holes judged old): never unsafe.
    while (kept.length > MAX_YOUNG) {
      for (let i = kept.length - 2; i >= 0; i -= 2) kept.splice(i, 1);
    }
    return kept;
  }

  toJSON(): LedgerViewJson {
    return {
      since: this.since ?? 0,
      acked: this.acked.toJSON(),
      unknown: this.unknown.toJSON(),
      produced: this.produced.toJSON(),
      buckets: encodeBuckets(this.producedBuckets),
      covered: this.covered.toJSON(),
      voided: this.voided.toJSON(),
      oldUpTo: this.#oldUpTo,
      young: this.#youngJSON(),
      unknownBlocks: [...this.unknownBlocks].sort((a, b) => a - b),
    };
  }
}

function encodeBuckets(buckets: ReadonlyMap<number, SeqRanges>): number[] {
  const flat: number[] = [];
  let start = 0;
  let seq = 0;
  const onRange = (from: number, to: number) => {
    flat.push(from - seq, to - from);
    seq = to;
  };
  for (const at of sortNumbers([...buckets.keys()])) {
    const seqs = buckets.get(at) as SeqRanges;
    flat.push(at - start, seqs.rangeCount);
    start = at;
    seqs.forEachRange(onRange);
  }
  return flat;
}

/** Sorts in place, ascending, and returns `numbers`: bucket maps mostly list their keys in order. */
export function sortNumbers(numbers: number[]): number[] {
  for (let i = 1; i < numbers.length; i++)
    if ((numbers[i - 1] as number) > (numbers[i] as number)) return numbers.sort((a, b) => a - b);
  return numbers;
}

function decodeBuckets(flat: readonly number[]): Map<number, SeqRanges> {
  const buckets = new Map<number, SeqRanges>();
  let start = 0;
  let seq = 0;
  for (let i = 0; i < flat.length; ) {
    start += flat[i++] as number;
    const seqs = new SeqRanges();
    for (let n = flat[i++] as number; n > 0; n--) {
      const from = seq + (flat[i++] as number);
      seq = from + (flat[i++] as number);
      seqs.addRange(from, seq);
    }
    buckets.set(start, seqs);
  }
  return buckets;
}

/** Calls `onRun` for each run of one status in `outcomes` (indexes from, to inclusive). */
export function runsOf(
  outcomes: readonly RecordOutcome[],
  onRun: (status: RecordOutcome['status'], from: number, to: number) => void,
): void {
  for (let i = 0; i < outcomes.length; ) {
    const status = (outcomes[i] as RecordOutcome).status;
    let end = i + 1;
    while (end < outcomes.length && (outcomes[end] as RecordOutcome).status === status) end++;
    onRun(status, i, end - 1);
    i = end;
  }
}
