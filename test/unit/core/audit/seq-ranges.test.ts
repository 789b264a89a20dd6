import { describe, expect, it } from 'vitest';
import {
  type DuplicateRun,
  SeqCounter,
  SeqRanges,
} from '../../../../functions/core/audit/seq-ranges.js';

// ---------------------------------------------------------------------------------------------
// A seeded PRNG (mulberry32) and naive references over small universes.

function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n: number) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** Canonical ranges of a naive set. */
function rangesOf(values: Iterable<number>): Array<[number, number]> {
  const sorted = [...values].sort((x, y) => x - y);
  const out: Array<[number, number]> = [];
  for (const v of sorted) {
    const last = out[out.length - 1];
    if (last && v <= last[1] + 1) last[1] = Math.max(last[1], v);
    else out.push([v, v]);
  }
  return out;
}

function randomRanges(rand: (n: number) => number, universe: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const n = rand(8);
  for (let i = 0; i < n; i++) {
    const from = rand(universe);
    out.push([from, Math.min(universe - 1, from + rand(12))]);
  }
  return out;
}

function naiveOf(ranges: ReadonlyArray<readonly [number, number]>): Set<number> {
  const s = new Set<number>();
  for (const [f, t] of ranges) for (let v = f; v <= t; v++) s.add(v);
  return s;
}

/** Checks the canonical-form invariant (fromJSON rejects anything else) and the count. */
function expectCanonical(set: SeqRanges): void {
  expect(SeqRanges.fromJSON(set.toJSON()).equals(set)).toBe(true);
  const total = set.ranges().reduce((sum, [f, t]) => sum + t - f + 1, 0);
  expect(set.count).toBe(total);
  expect(set.rangeCount).toBe(set.ranges().length);
}

// ---------------------------------------------------------------------------------------------

describe('SeqRanges basics', () => {
  it('starts empty', () => {
    const s = new SeqRanges();
    expect(s.count).toBe(0);
    expect(s.rangeCount).toBe(0);
    expect(s.min).toBeUndefined();
    expect(s.max).toBeUndefined();
    expect(s.isEmpty).toBe(true);
    expect(s.has(0)).toBe(false);
    expect(s.toJSON()).toEqual([]);
  });

  it('appends increasing seqs into one range and opens a new range after a gap', () => {
    const s = new SeqRanges();
    for (const v of [1, 2, 3, 5, 6, 10]) s.add(v);
    expect(s.toJSON()).toEqual([
      [1, 3],
      [5, 6],
      [10, 10],
    ]);
    expect(s.count).toBe(6);
    expect(s.rangeCount).toBe(3);
    expect(s.min).toBe(1);
    expect(s.max).toBe(10);
  });

  it('merges adjacent ranges (1-3 + 4-6 → 1-6) in either order', () => {
    expect(new SeqRanges().addRange(1, 3).addRange(4, 6).toJSON()).toEqual([[1, 6]]);
    expect(new SeqRanges().addRange(4, 6).addRange(1, 3).toJSON()).toEqual([[1, 6]]);
    expect(
      SeqRanges.from([
        [1, 3],
        [7, 9],
        [4, 6],
      ]).toJSON(),
    ).toEqual([[1, 9]]);
  });

  it('merges overlapping ranges and a range bridging several', () => {
    const s = SeqRanges.from([
      [1, 2],
      [5, 6],
      [9, 10],
      [20, 30],
    ]);
    s.addRange(2, 9);
    expect(s.toJSON()).toEqual([
      [1, 10],
      [20, 30],
    ]);
    expect(s.count).toBe(21);
    s.addRange(0, 40);
    expect(s.toJSON()).toEqual([[0, 40]]);
    expect(s.count).toBe(41);
  });

  it('inserts out of order, filling gaps and keeping order', () => {
    const s = new SeqRanges();
    for (const v of [10, 2, 7, 3, 1, 9, 8, 20, 0]) s.add(v);
    expect(s.toJSON()).toEqual([
      [0, 3],
      [7, 10],
      [20, 20],
    ]);
    expect(s.count).toBe(9);
    s.add(5);
    expect(s.toJSON()).toEqual([
      [0, 3],
      [5, 5],
      [7, 10],
      [20, 20],
    ]);
    s.add(4).add(6);
    expect(s.toJSON()).toEqual([
      [0, 10],
      [20, 20],
    ]);
    expectCanonical(s);
  });

  it('is idempotent for re-adds of seqs and ranges', () => {
    const s = SeqRanges.from([
      [1, 5],
      [10, 12],
    ]);
    const before = s.toJSON();
    s.add(1).add(3).add(5).add(11).add(12).addRange(2, 4).addRange(10, 12).addRange(1, 5);
    expect(s.toJSON()).toEqual(before);
    expect(s.count).toBe(8);
  });

  it('answers has() by binary search', () => {
    const s = SeqRanges.from([
      [1, 3],
      [7, 7],
      [10, 20],
    ]);
    const inside = [1, 2, 3, 7, 10, 15, 20];
    const outside = [0, 4, 6, 8, 9, 21, 1000];
    for (const v of inside) expect(s.has(v)).toBe(true);
    for (const v of outside) expect(s.has(v)).toBe(false);
  });

  it('rejects bad seqs and ranges with RangeError', () => {
    const s = new SeqRanges();
    expect(() => s.add(-1)).toThrow(RangeError);
    expect(() => s.add(1.5)).toThrow(RangeError);
    expect(() => s.add(Number.NaN)).toThrow(RangeError);
    expect(() => s.add(Number.MAX_SAFE_INTEGER + 1)).toThrow(RangeError);
    expect(() => s.addRange(5, 4)).toThrow(/from \(5\) must not be greater than to \(4\)/);
    expect(() => s.addRange(-1, 4)).toThrow(RangeError);
    expect(() => s.addRange(1, Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => SeqRanges.from([[3, 2]])).toThrow(RangeError);
    expect(() => s.gapsWithin(3, 2)).toThrow(RangeError);
    expect(s.count).toBe(0);
  });

  it('handles seqs up to MAX_SAFE_INTEGER', () => {
    const top = Number.MAX_SAFE_INTEGER;
    const s = new SeqRanges().addRange(top - 2, top).add(0);
    expect(s.toJSON()).toEqual([
      [0, 0],
      [top - 2, top],
    ]);
    expect(s.has(top)).toBe(true);
    expect(s.count).toBe(4);
  });

  it('finds gaps within a window', () => {
    const s = SeqRanges.from([
      [3, 5],
      [8, 8],
      [12, 20],
    ]);
    expect(s.gapsWithin(1, 25)).toEqual([
      [1, 2],
      [6, 7],
      [9, 11],
      [21, 25],
    ]);
    expect(s.gapsWithin(4, 13)).toEqual([
      [6, 7],
      [9, 11],
    ]);
    expect(s.gapsWithin(12, 20)).toEqual([]);
    expect(new SeqRanges().gapsWithin(1, 3)).toEqual([[1, 3]]);
    expect(s.runsWithin(4, 13)).toEqual([
      [4, 5],
      [8, 8],
      [12, 13],
    ]);
  });

  it('does set algebra on examples', () => {
    const a = SeqRanges.from([
      [1, 10],
      [20, 30],
    ]);
    const b = SeqRanges.from([
      [5, 22],
      [30, 40],
    ]);
    expect(a.union(b).toJSON()).toEqual([[1, 40]]);
    expect(a.intersect(b).toJSON()).toEqual([
      [5, 10],
      [20, 22],
      [30, 30],
    ]);
    expect(a.difference(b).toJSON()).toEqual([
      [1, 4],
      [23, 29],
    ]);
    expect(b.difference(a).toJSON()).toEqual([
      [11, 19],
      [31, 40],
    ]);
    // Operands are unchanged.
    expect(a.toJSON()).toEqual([
      [1, 10],
      [20, 30],
    ]);
    expect(a.union(new SeqRanges()).equals(a)).toBe(true);
    expect(a.intersect(new SeqRanges()).isEmpty).toBe(true);
    expect(a.difference(new SeqRanges()).equals(a)).toBe(true);
  });

  it('compares with equals() and copies with clone()', () => {
    const a = SeqRanges.from([
      [1, 3],
      [5, 6],
    ]);
    expect(
      a.equals(
        SeqRanges.from([
          [5, 6],
          [1, 1],
          [2, 3],
        ]),
      ),
    ).toBe(true);
    expect(a.equals(SeqRanges.from([[1, 6]]))).toBe(false);
    expect(a.equals(new SeqRanges())).toBe(false);
    const c = a.clone().add(4);
    expect(c.toJSON()).toEqual([[1, 6]]);
    expect(a.toJSON()).toEqual([
      [1, 3],
      [5, 6],
    ]);
  });

  it('returns fresh pairs from ranges()', () => {
    const a = SeqRanges.from([[1, 3]]);
    const got = a.ranges();
    (got as Array<[number, number]>)[0] = [7, 8];
    expect(a.toJSON()).toEqual([[1, 3]]);
  });
});

describe('SeqRanges JSON', () => {
  it('round-trips', () => {
    const a = SeqRanges.from([
      [0, 0],
      [2, 9],
      [11, 11],
      [100, 2000],
    ]);
    const text = JSON.stringify(a);
    expect(text).toBe('[[0,0],[2,9],[11,11],[100,2000]]');
    const b = SeqRanges.fromJSON(JSON.parse(text));
    expect(b.equals(a)).toBe(true);
    expect(b.count).toBe(a.count);
    expect(SeqRanges.fromJSON([]).isEmpty).toBe(true);
  });

  it.each([
    ['not an array', { a: 1 }, TypeError, /must be an array/],
    ['a non-pair', [[1, 2], [3]], TypeError, /ranges\[1\] must be a \[from, to\] pair/],
    ['a non-array element', [5], TypeError, /ranges\[0\] must be a \[from, to\] pair/],
    ['non-integer', [[1, 2.5]], RangeError, /ranges\[0\] must hold non-negative safe integers/],
    ['a string', [['1', 2]], RangeError, /non-negative safe integers/],
    ['negative', [[-1, 2]], RangeError, /non-negative safe integers/],
    ['reversed', [[5, 2]], RangeError, /from \(5\) is greater than to \(2\)/],
    [
      'unsorted',
      [
        [5, 6],
        [1, 2],
      ],
      RangeError,
      /sorted and disjoint/,
    ],
    [
      'overlapping',
      [
        [1, 5],
        [5, 8],
      ],
      RangeError,
      /ranges\[1\] starts at 5.*sorted and disjoint/,
    ],
    [
      'adjacent',
      [
        [1, 3],
        [4, 6],
      ],
      RangeError,
      /adjacent ranges must be merged/,
    ],
  ])('rejects %s', (_name, json, type, message) => {
    expect(() => SeqRanges.fromJSON(json)).toThrow(type);
    expect(() => SeqRanges.fromJSON(json)).toThrow(message);
  });
});

describe('SeqRanges against a naive Set on random inputs', () => {
  it('agrees on add, has, count, gaps, union, addAll, intersect and difference (600 cases)', () => {
    const rand = prng(0x5eed);
    const universe = 80;
    for (let c = 0; c < 600; c++) {
      const ra = randomRanges(rand, universe);
      const rb = randomRanges(rand, universe);
      const singles = Array.from({ length: rand(15) }, () => rand(universe));
      const a = SeqRanges.from(ra);
      for (const v of singles) a.add(v);
      const b = SeqRanges.from(rb);
      const na = naiveOf(ra);
      for (const v of singles) na.add(v);
      const nb = naiveOf(rb);

      expect(a.toJSON()).toEqual(rangesOf(na));
      expect(a.count).toBe(na.size);
      expectCanonical(a);
      const all = Array.from({ length: universe }, (_, v) => v);
      expect(all.filter((v) => a.has(v))).toEqual(all.filter((v) => na.has(v)));

      const union = a.union(b);
      expect(union.toJSON()).toEqual(rangesOf([...na, ...nb]));
      expectCanonical(union);
      const inter = a.intersect(b);
      expect(inter.toJSON()).toEqual(rangesOf([...na].filter((v) => nb.has(v))));
      expectCanonical(inter);
      const diff = a.difference(b);
      expect(diff.toJSON()).toEqual(rangesOf([...na].filter((v) => !nb.has(v))));
      expectCanonical(diff);

      const from = rand(universe);
      const to = from + rand(universe - from);
      const window = Array.from({ length: to - from + 1 }, (_, i) => from + i);
      expect(a.gapsWithin(from, to)).toEqual(rangesOf(window.filter((v) => !na.has(v))));
      expect(a.runsWithin(from, to)).toEqual(rangesOf(window.filter((v) => na.has(v))));
      expect(a.equals(SeqRanges.fromJSON(rangesOf(na)))).toBe(true);

      // addAll is a bulk union in place; forEachRange walks the same ranges as ranges().
      const merged = a.clone().addAll(b);
      expect(merged.toJSON()).toEqual(rangesOf([...na, ...nb]));
      expect(merged.count).toBe(union.count);
      expectCanonical(merged);
      expect(a.toJSON()).toEqual(rangesOf(na));
      const walked: Array<[number, number]> = [];
      b.forEachRange((f, t) => walked.push([f, t]));
      expect(walked).toEqual(b.toJSON());
    }
  });
});

// ---------------------------------------------------------------------------------------------

/** Maximal runs of equal counts ≥ 2 from a naive count map. */
function naiveDuplicates(counts: Map<number, number>): DuplicateRun[] {
  const out: Array<{ from: number; to: number; times: number }> = [];
  for (const v of [...counts.keys()].sort((x, y) => x - y)) {
    const times = counts.get(v) ?? 0;
    if (times < 2) continue;
    const last = out[out.length - 1];
    if (last && last.to + 1 === v && last.times === times) last.to = v;
    else out.push({ from: v, to: v, times });
  }
  return out;
}

describe('SeqCounter', () => {
  it('counts observations and reports no duplicates for distinct seqs', () => {
    const c = new SeqCounter();
    expect(c.count).toBe(0);
    expect(c.seen().isEmpty).toBe(true);
    c.add(1).add(2).addRange(3, 10).add(20);
    expect(c.count).toBe(11);
    expect(c.seen().toJSON()).toEqual([
      [1, 10],
      [20, 20],
    ]);
    expect(c.duplicates()).toEqual([]);
    expect(c.timesOf(5)).toBe(1);
    expect(c.timesOf(11)).toBe(0);
  });

  it('finds duplicates seen 2 and 3 times, splitting runs', () => {
    const c = new SeqCounter();
    c.addRange(1, 10);
    c.addRange(4, 7); // 4-7 twice
    expect(c.duplicates()).toEqual([{ from: 4, to: 7, times: 2 }]);
    c.add(5); // 5 three times: 4-7 splits into 4, 5, 6-7
    expect(c.duplicates()).toEqual([
      { from: 4, to: 4, times: 2 },
      { from: 5, to: 5, times: 3 },
      { from: 6, to: 7, times: 2 },
    ]);
    c.add(8); // 8 twice: joins 6-7
    expect(c.duplicates()).toEqual([
      { from: 4, to: 4, times: 2 },
      { from: 5, to: 5, times: 3 },
      { from: 6, to: 8, times: 2 },
    ]);
    c.add(4); // 4 three times: joins 5
    expect(c.duplicates()).toEqual([
      { from: 4, to: 5, times: 3 },
      { from: 6, to: 8, times: 2 },
    ]);
    c.addRange(2, 9); // everything shifts by one; 2-3 and 9 become twice
    expect(c.duplicates()).toEqual([
      { from: 2, to: 3, times: 2 },
      { from: 4, to: 5, times: 4 },
      { from: 6, to: 8, times: 3 },
      { from: 9, to: 9, times: 2 },
    ]);
    expect(c.timesOf(1)).toBe(1);
    expect(c.timesOf(5)).toBe(4);
    expect(c.timesOf(9)).toBe(2);
    expect(c.count).toBe(10 + 4 + 1 + 1 + 1 + 8);
    expect(c.seen().toJSON()).toEqual([[1, 10]]);
  });

  it('counts a range that overlaps seen and unseen seqs only once for the unseen', () => {
    const c = new SeqCounter();
    c.addRange(1, 3).addRange(7, 9);
    c.addRange(0, 12);
    expect(c.seen().toJSON()).toEqual([[0, 12]]);
    expect(c.duplicates()).toEqual([
      { from: 1, to: 3, times: 2 },
      { from: 7, to: 9, times: 2 },
    ]);
    expect(c.count).toBe(19);
  });

  it('returns a copy from seen()', () => {
    const c = new SeqCounter().addRange(1, 3);
    c.seen().add(4);
    expect(c.seen().toJSON()).toEqual([[1, 3]]);
  });

  it('rejects bad seqs', () => {
    const c = new SeqCounter();
    expect(() => c.add(-1)).toThrow(RangeError);
    expect(() => c.addRange(3, 2)).toThrow(RangeError);
    expect(() => c.add(0.5)).toThrow(RangeError);
    expect(c.count).toBe(0);
  });

  it('agrees with a naive count map on random inputs (400 cases)', () => {
    const rand = prng(42);
    const universe = 60;
    for (let k = 0; k < 400; k++) {
      const c = new SeqCounter();
      const counts = new Map<number, number>();
      let total = 0;
      const ops = 1 + rand(25);
      for (let i = 0; i < ops; i++) {
        const from = rand(universe);
        const to = rand(3) === 0 ? Math.min(universe - 1, from + rand(10)) : from;
        if (from === to && rand(2) === 0) c.add(from);
        else c.addRange(from, to);
        for (let v = from; v <= to; v++) counts.set(v, (counts.get(v) ?? 0) + 1);
        total += to - from + 1;
      }
      expect(c.count).toBe(total);
      expect(c.seen().toJSON()).toEqual(rangesOf(counts.keys()));
      expect(c.duplicates()).toEqual(naiveDuplicates(counts));
      const all = Array.from({ length: universe }, (_, v) => v);
      expect(all.map((v) => c.timesOf(v))).toEqual(all.map((v) => counts.get(v) ?? 0));
    }
  });
});

describe('size: 10 M mostly increasing seqs', () => {
  // Its speed is the audit bench's (bench/audit.ts: per-record accounting), not a limit here: a
  // timed assertion (4 s) failed on a loaded machine. CPU-bound: a limit for a busy one.
  it('keeps ~1,001 ranges and 100 duplicate runs', () => {
    const total = 10_000_000;
    const ranges = new SeqRanges();
    const counter = new SeqCounter();
    for (let seq = 1; seq <= total; seq++) {
      if (seq % 10_000 === 5_000) continue; // 1,000 gaps, all inside
      ranges.add(seq);
      counter.add(seq);
      if (seq % 100_000 === 1) {
        // 100 seqs observed twice
        ranges.add(seq);
        counter.add(seq);
      }
    }
    const gaps = 1_000;
    expect(ranges.rangeCount).toBe(gaps + 1);
    expect(ranges.count).toBe(total - gaps);
    expect(ranges.gapsWithin(1, total)).toHaveLength(gaps);
    expect(counter.seen().equals(ranges)).toBe(true);
    const duplicates = counter.duplicates();
    expect(duplicates).toHaveLength(100);
    expect(duplicates.every((d) => d.from === d.to && d.times === 2)).toBe(true);
    expect(counter.count).toBe(total - gaps + 100);
  }, 120_000);
});

describe('SeqRanges filled range by range inside the set (records read partition by partition)', () => {
  it('agrees with a naive Set when seqs extend ranges between others, in random interleavings', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rand = prng(seed);
      // Blocks of consecutive seqs; the scan takes a few seqs of one block at a time.
      const blocks = Array.from({ length: 2 + rand(6) }, (_, b) => ({
        next: b * 20 + 1,
        end: b * 20 + 1 + rand(20),
      }));
      const set = new SeqRanges();
      const naive = new Set<number>();
      for (;;) {
        const open = blocks.filter((b) => b.next < b.end);
        if (open.length === 0) break;
        const block = open[rand(open.length)] as (typeof blocks)[number];
        for (let n = 1 + rand(4); n > 0 && block.next < block.end; n--) {
          // Now and then a seq seen before (a copy), which must change nothing.
          const seq =
            rand(5) === 0 && naive.size > 0
              ? ([...naive][rand(naive.size)] as number)
              : block.next++;
          set.add(seq);
          naive.add(seq);
        }
        expect(set.toJSON(), `seed ${seed}`).toEqual(rangesOf(naive));
        expect(set.count).toBe(naive.size);
      }
    }
  });
});

describe('SeqCounter.addOne', () => {
  it('says how often a seq was seen before and counts it as add does', () => {
    const one = new SeqCounter();
    const other = new SeqCounter();
    const seen = new Map<number, number>();
    const rand = prng(7);
    for (let i = 0; i < 2000; i++) {
      const seq = 1 + rand(300);
      expect(one.addOne(seq)).toBe(seen.get(seq) ?? 0);
      other.add(seq);
      seen.set(seq, (seen.get(seq) ?? 0) + 1);
    }
    expect(one.toJSON()).toEqual(other.toJSON());
    expect(() => one.addOne(-1)).toThrow(RangeError);
  });
});
