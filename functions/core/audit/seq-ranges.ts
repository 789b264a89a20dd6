// Sets of sequence numbers (non-negative safe integers) kept as sorted, disjoint, non-adjacent
// inclusive ranges, so an audit's memory grows with its findings (gaps, duplicate runs) and not
// with its record count: 10 M dense seqs with 1,000 gaps are 1,001 ranges.
//
// Both classes are MUTABLE: add/addRange change the receiver. The set operations (union,
// intersect, difference, gapsWithin, runsWithin) never change their operands and return new
// values. Appending in increasing order is O(1) amortised; an out-of-order insert is a binary
// search plus a splice (O(rangeCount) in the worst case, which is the number of findings).

/** An inclusive range [from, to] of sequence numbers. */
export type SeqRange = readonly [from: number, to: number];

/** A maximal run of seqs each seen `times` (≥ 2) times. */
export interface DuplicateRun {
  readonly from: number;
  readonly to: number;
  readonly times: number;
}

function isSeq(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function checkSeq(seq: number, name: string): void {
  if (!isSeq(seq)) {
    throw new RangeError(`${name} must be a non-negative safe integer, not ${String(seq)}`);
  }
}

function checkRange(from: number, to: number): void {
  checkSeq(from, 'from');
  checkSeq(to, 'to');
  if (from > to) throw new RangeError(`from (${from}) must not be greater than to (${to})`);
}

/** Appends [from, to] to a flat, sorted pair array, merging with the last pair when they touch. */
function pushMerged(out: number[], from: number, to: number): void {
  const n = out.length;
  if (n > 0 && from <= (out[n - 1] as number) + 1) {
    if (to > (out[n - 1] as number)) out[n - 1] = to;
  } else {
    out.push(from, to);
  }
}

function countOf(flat: readonly number[]): number {
  let total = 0;
  for (let i = 0; i < flat.length; i += 2)
    total += (flat[i + 1] as number) - (flat[i] as number) + 1;
  return total;
}

export class SeqRanges {
  /** Flat pairs: [from0, to0, from1, to1, ...], sorted, disjoint and non-adjacent. */
  private r: number[];
  private total: number;
  /** Flat index of the range the last insert made or grew: where the next add looks first. */
  private hint = 0;

  constructor() {
    this.r = [];
    this.total = 0;
  }

  /** A set from ranges in any order; they may overlap or touch. Throws RangeError on bad ones. */
  static from(ranges: Iterable<SeqRange>): SeqRanges {
    const set = new SeqRanges();
    for (const [from, to] of ranges) set.addRange(from, to);
    return set;
  }

  /**
   * The set that `toJSON()` wrote: an array of [from, to] pairs of non-negative safe integers,
   * from ≤ to, sorted, disjoint and non-adjacent (the canonical form). Throws TypeError for a
   * wrong shape and RangeError for bad numbers or order, naming the offending element.
   */
  static fromJSON(json: unknown): SeqRanges {
    if (!Array.isArray(json))
      throw new TypeError('seq ranges must be an array of [from, to] pairs');
    const flat: number[] = [];
    for (let i = 0; i < json.length; i++) {
      const pair: unknown = json[i];
      if (!Array.isArray(pair) || pair.length !== 2) {
        throw new TypeError(`ranges[${i}] must be a [from, to] pair`);
      }
      const [from, to] = pair as [unknown, unknown];
      if (!isSeq(from) || !isSeq(to)) {
        throw new RangeError(
          `ranges[${i}] must hold non-negative safe integers, not ${JSON.stringify(pair)}`,
        );
      }
      if (from > to)
        throw new RangeError(`ranges[${i}]: from (${from}) is greater than to (${to})`);
      const prevTo = flat[flat.length - 1];
      if (prevTo !== undefined) {
        if (from <= prevTo) {
          throw new RangeError(
            `ranges[${i}] starts at ${from}, not after ranges[${i - 1}] ends at ${prevTo}: ranges must be sorted and disjoint`,
          );
        }
        if (from === prevTo + 1) {
          throw new RangeError(
            `ranges[${i}] starts at ${from}, right after ranges[${i - 1}] ends: adjacent ranges must be merged`,
          );
        }
      }
      flat.push(from, to);
    }
    return SeqRanges.ofFlat(flat);
  }

  /** Wraps an already canonical flat pair array (owned by the new set). */
  private static ofFlat(flat: number[]): SeqRanges {
    const set = new SeqRanges();
    set.r = flat;
    set.total = countOf(flat);
    return set;
  }

  /** Number of seqs in the set. */
  get count(): number {
    return this.total;
  }

  /** Number of disjoint ranges. */
  get rangeCount(): number {
    return this.r.length >> 1;
  }

  get min(): number | undefined {
    return this.r[0];
  }

  get max(): number | undefined {
    return this.r[this.r.length - 1];
  }

  get isEmpty(): boolean {
    return this.r.length === 0;
  }

  /** Adds one seq. O(1) when seq ≥ the start of the last range. */
  add(seq: number): this {
    checkSeq(seq, 'seq');
    const r = this.r;
    const n = r.length;
    if (n === 0) {
      r.push(seq, seq);
      this.total = 1;
      return this;
    }
    const lastTo = r[n - 1] as number;
    if (seq > lastTo) {
      if (seq === lastTo + 1) r[n - 1] = seq;
      else r.push(seq, seq);
      this.total++;
      return this;
    }
    if (seq >= (r[n - 2] as number)) return this;
    // Records read partition by partition extend a range inside the set seq after seq: the one
    // the last insert touched is tried before a search (any pair index gives a right answer).
    const h = this.hint;
    if (h < n) {
      const hTo = r[h + 1] as number;
      if (seq === hTo + 1) {
        const nextFrom = r[h + 2];
        if (nextFrom === undefined || nextFrom > seq + 1) {
          r[h + 1] = seq;
          this.total++;
          return this;
        }
      } else if (seq <= hTo && seq >= (r[h] as number)) return this;
    }
    return this.insert(seq, seq);
  }

  /** Adds [from, to] inclusive. Throws RangeError unless 0 ≤ from ≤ to are safe integers. */
  addRange(from: number, to: number): this {
    checkRange(from, to);
    const r = this.r;
    const n = r.length;
    if (n === 0 || from > (r[n - 1] as number) + 1) {
      r.push(from, to);
      this.total += to - from + 1;
      return this;
    }
    if (from >= (r[n - 2] as number)) {
      const lastTo = r[n - 1] as number;
      if (to > lastTo) {
        r[n - 1] = to;
        this.total += to - lastTo;
      }
      return this;
    }
    return this.insert(from, to);
  }

  /**
   * Adds every seq of `other` (the same as adding its ranges one by one, without checking them
   * again or allocating pairs): O(1) per range when they all come after this set's last one.
   */
  addAll(other: SeqRanges): this {
    const b = other.r;
    for (let i = 0; i < b.length; i += 2) {
      const from = b[i] as number;
      const to = b[i + 1] as number;
      const r = this.r;
      const n = r.length;
      if (n === 0 || from > (r[n - 1] as number) + 1) {
        r.push(from, to);
        this.total += to - from + 1;
      } else if (from >= (r[n - 2] as number)) {
        const lastTo = r[n - 1] as number;
        if (to > lastTo) {
          r[n - 1] = to;
          this.total += to - lastTo;
        }
      } else this.insert(from, to);
    }
    return this;
  }

  /** Calls `onRange` for each range in order, allocating nothing (for hot loops). */
  forEachRange(onRange: (from: number, to: number) => void): void {
    const r = this.r;
    for (let i = 0; i < r.length; i += 2) onRange(r[i] as number, r[i + 1] as number);
  }

  /** The general case: merge [from, to] with every range it overlaps or touches. */
  private insert(from: number, to: number): this {
    const r = this.r;
    const lo = this.firstEndingAtOrAfter(from - 1); // first range with to + 1 ≥ from
    let hi = lo; // first range with from > to + 1
    const n = this.rangeCount;
    let merged = 0;
    let newFrom = from;
    let newTo = to;
    while (hi < n && (r[2 * hi] as number) <= to + 1) {
      const f = r[2 * hi] as number;
      const t = r[2 * hi + 1] as number;
      merged += t - f + 1;
      if (f < newFrom) newFrom = f;
      if (t > newTo) newTo = t;
      hi++;
    }
    r.splice(2 * lo, 2 * (hi - lo), newFrom, newTo);
    this.total += newTo - newFrom + 1 - merged;
    this.hint = 2 * lo;
    return this;
  }

  /** Index of the first range whose `to` is ≥ seq (rangeCount when none). */
  private firstEndingAtOrAfter(seq: number): number {
    let lo = 0;
    let hi = this.r.length >> 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.r[2 * mid + 1] as number) < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Whether seq is in the set (binary search). */
  has(seq: number): boolean {
    const i = this.firstEndingAtOrAfter(seq);
    const from = this.r[2 * i];
    return from !== undefined && from <= seq;
  }

  /** The ranges in order, as fresh [from, to] pairs. */
  ranges(): Array<readonly [number, number]> {
    const out: Array<readonly [number, number]> = [];
    for (let i = 0; i < this.r.length; i += 2) {
      out.push([this.r[i] as number, this.r[i + 1] as number]);
    }
    return out;
  }

  toJSON(): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    for (let i = 0; i < this.r.length; i += 2) {
      out.push([this.r[i] as number, this.r[i + 1] as number]);
    }
    return out;
  }

  /** The seqs greater than `seq`, as a new set: what is left once everything up to it is folded. */
  above(seq: number): SeqRanges {
    const r = this.r;
    const i = 2 * this.firstEndingAtOrAfter(seq + 1);
    const out = r.slice(i);
    if (out.length > 0 && (out[0] as number) <= seq) out[0] = seq + 1;
    return SeqRanges.ofFlat(out);
  }

  /** A copy that can be changed independently. */
  clone(): SeqRanges {
    return SeqRanges.ofFlat([...this.r]);
  }

  /** Seqs in either set. O(n + m). */
  union(other: SeqRanges): SeqRanges {
    const a = this.r;
    const b = other.r;
    const out: number[] = [];
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      if (j >= b.length || (i < a.length && (a[i] as number) <= (b[j] as number))) {
        pushMerged(out, a[i] as number, a[i + 1] as number);
        i += 2;
      } else {
        pushMerged(out, b[j] as number, b[j + 1] as number);
        j += 2;
      }
    }
    return SeqRanges.ofFlat(out);
  }

  /** Seqs in both sets. O(n + m). */
  intersect(other: SeqRanges): SeqRanges {
    const a = this.r;
    const b = other.r;
    const out: number[] = [];
    let i = 0;
    let j = 0;
    while (i < a.length && j < b.length) {
      const aTo = a[i + 1] as number;
      const bTo = b[j + 1] as number;
      const from = Math.max(a[i] as number, b[j] as number);
      const to = Math.min(aTo, bTo);
      if (from <= to) pushMerged(out, from, to);
      if (aTo < bTo) i += 2;
      else j += 2;
    }
    return SeqRanges.ofFlat(out);
  }

  /** Seqs in this set and not in `other`. O(n + m). */
  difference(other: SeqRanges): SeqRanges {
    const a = this.r;
    const b = other.r;
    const out: number[] = [];
    let j = 0;
    for (let i = 0; i < a.length; i += 2) {
      let from = a[i] as number;
      const to = a[i + 1] as number;
      // Skip the ranges of `other` that end before this one starts.
      while (j < b.length && (b[j + 1] as number) < from) j += 2;
      let k = j;
      while (k < b.length && (b[k] as number) <= to) {
        const bFrom = b[k] as number;
        const bTo = b[k + 1] as number;
        if (bFrom > from) pushMerged(out, from, bFrom - 1);
        if (bTo >= to) {
          from = to + 1;
          break;
        }
        from = bTo + 1;
        k += 2;
      }
      if (from <= to) pushMerged(out, from, to);
      // A range of `other` that runs past `to` may cover the next range too: keep j on it.
      j = k;
    }
    return SeqRanges.ofFlat(out);
  }

  /** The runs of this set inside [from, to], in order. O(log n + runs). */
  runsWithin(from: number, to: number): Array<[number, number]> {
    checkRange(from, to);
    const out: Array<[number, number]> = [];
    const r = this.r;
    for (let i = 2 * this.firstEndingAtOrAfter(from); i < r.length; i += 2) {
      const f = r[i] as number;
      if (f > to) break;
      out.push([Math.max(f, from), Math.min(r[i + 1] as number, to)]);
    }
    return out;
  }

  /** The runs missing from this set inside [from, to], in order. O(log n + gaps). */
  gapsWithin(from: number, to: number): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    let next = from;
    for (const [f, t] of this.runsWithin(from, to)) {
      if (f > next) out.push([next, f - 1]);
      next = t + 1;
    }
    if (next <= to) out.push([next, to]);
    return out;
  }

  equals(other: SeqRanges): boolean {
    const a = this.r;
    const b = other.r;
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
}

/**
 * How many times each seq was observed, in memory proportional to runs: a SeqRanges of seqs
 * seen at least once plus a sorted array of runs seen ≥ 2 times (duplicates are rare). Mutable.
 */
export class SeqCounter {
  private once = new SeqRanges();
  /** Flat triples [from, to, times], sorted, disjoint, times ≥ 2; touching runs differ in times. */
  private multi: number[] = [];
  private observations = 0;

  /** Total observations (every add counts, duplicates included). */
  get count(): number {
    return this.observations;
  }

  /** A plain-data form for checkpoints: `SeqCounter.fromJSON(JSON.parse(JSON.stringify(c)))`. */
  toJSON(): { seen: Array<[number, number]>; multi: number[]; observations: number } {
    return { seen: this.once.toJSON(), multi: [...this.multi], observations: this.observations };
  }

  /** The counter `toJSON()` wrote; throws TypeError/RangeError naming what is wrong. */
  static fromJSON(json: unknown): SeqCounter {
    if (typeof json !== 'object' || json === null)
      throw new TypeError('a seq counter must be {seen, multi, observations}');
    const { seen, multi, observations } = json as Record<string, unknown>;
    const counter = new SeqCounter();
    const once = SeqRanges.fromJSON(seen);
    if (!Array.isArray(multi) || multi.length % 3 !== 0 || !multi.every(isSeq))
      throw new TypeError('multi must be a flat array of [from, to, times] triples');
    if (!isSeq(observations) || observations < once.count)
      throw new RangeError(`observations (${String(observations)}) must be ≥ the seqs seen`);
    counter.once = once;
    counter.multi = multi as number[];
    counter.observations = observations;
    return counter;
  }

  /** Adds one observation of `seq`; says how many times it was observed before. */
  addOne(seq: number): number {
    checkSeq(seq, 'seq');
    const max = this.once.max;
    if (max === undefined || seq > max) {
      this.once.add(seq);
      this.observations++;
      return 0;
    }
    const before = this.timesOf(seq);
    if (before === 0) {
      this.once.add(seq);
      this.observations++;
    } else this.addRange(seq, seq);
    return before;
  }

  add(seq: number): this {
    checkSeq(seq, 'seq');
    const max = this.once.max;
    if (max === undefined || seq > max) {
      this.once.add(seq);
      this.observations++;
      return this;
    }
    return this.addRange(seq, seq);
  }

  addRange(from: number, to: number): this {
    checkRange(from, to);
    this.observations += to - from + 1;
    const max = this.once.max;
    if (max === undefined || from > max) {
      this.once.addRange(from, to);
      return this;
    }
    for (const [f, t] of this.once.runsWithin(from, to)) this.bump(f, t);
    this.once.addRange(from, to);
    return this;
  }

  /** Forgets every seq up to `seq` (folded into totals by the caller): memory stays with the rest. */
  dropThrough(seq: number): this {
    this.once = this.once.above(seq);
    const kept: number[] = [];
    let extra = 0;
    const m = this.multi;
    for (let i = 0; i < m.length; i += 3) {
      const to = m[i + 1] as number;
      if (to <= seq) continue;
      const from = Math.max(m[i] as number, seq + 1);
      const times = m[i + 2] as number;
      kept.push(from, to, times);
      extra += (to - from + 1) * (times - 1);
    }
    this.multi = kept;
    this.observations = this.once.count + extra;
    return this;
  }

  /** How many times seq was observed. */
  timesOf(seq: number): number {
    if (!this.once.has(seq)) return 0;
    const i = this.firstRunEndingAtOrAfter(seq);
    const m = this.multi;
    return i < m.length && (m[i] as number) <= seq ? (m[i + 2] as number) : 1;
  }

  /** Seqs seen at least once (a copy). */
  seen(): SeqRanges {
    return this.once.clone();
  }

  /** Maximal runs of seqs seen the same number (≥ 2) of times, in order. */
  duplicates(): DuplicateRun[] {
    const out: DuplicateRun[] = [];
    const m = this.multi;
    for (let i = 0; i < m.length; i += 3) {
      out.push({ from: m[i] as number, to: m[i + 1] as number, times: m[i + 2] as number });
    }
    return out;
  }

  /** Flat index (multiple of 3) of the first run whose `to` is ≥ seq (m.length when none). */
  private firstRunEndingAtOrAfter(seq: number): number {
    const m = this.multi;
    let lo = 0;
    let hi = m.length / 3;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((m[3 * mid + 1] as number) < seq) lo = mid + 1;
      else hi = mid;
    }
    return 3 * lo;
  }

  /** One more observation of every seq in [from, to], all of which were already seen. */
  private bump(from: number, to: number): void {
    const m = this.multi;
    let start = this.firstRunEndingAtOrAfter(from);
    let end = start;
    const pieces: number[] = [];
    // Include the run just before, so a new run of equal times that touches it merges.
    if (start > 0) {
      start -= 3;
      pieces.push(m[start] as number, m[start + 1] as number, m[start + 2] as number);
    }
    let next = from;
    while (end < m.length && (m[end] as number) <= to) {
      const f = m[end] as number;
      const t = m[end + 1] as number;
      const times = m[end + 2] as number;
      if (f < from) pieces.push(f, from - 1, times);
      if (f > next) pieces.push(next, f - 1, 2);
      const lo = Math.max(f, from);
      const hi = Math.min(t, to);
      pieces.push(lo, hi, times + 1);
      if (t > to) pieces.push(to + 1, t, times);
      next = hi + 1;
      end += 3;
    }
    if (next <= to) pieces.push(next, to, 2);
    // And the run just after, for the same reason.
    if (end < m.length) {
      pieces.push(m[end] as number, m[end + 1] as number, m[end + 2] as number);
      end += 3;
    }
    const merged: number[] = [];
    for (let i = 0; i < pieces.length; i += 3) {
      const f = pieces[i] as number;
      const t = pieces[i + 1] as number;
      const times = pieces[i + 2] as number;
      const n = merged.length;
      if (n > 0 && merged[n - 1] === times && (merged[n - 2] as number) + 1 === f) {
        merged[n - 2] = t;
      } else {
        merged.push(f, t, times);
      }
    }
    if (merged.length < 30_000) m.splice(start, end - start, ...merged);
    else this.multi = [...m.slice(0, start), ...merged, ...m.slice(end)];
  }
}
