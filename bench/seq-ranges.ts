// SeqRanges / SeqCounter benchmark: wall time and heap growth of 10 M mostly increasing adds
// (1,000 gaps, 100 seqs seen twice, 100 late seqs filling earlier gaps) into each structure.
// Prints one JSON object; never fails on a number.
//
//   node --expose-gc --import tsx bench/seq-ranges.ts
import { performance } from 'node:perf_hooks';
import { SeqCounter, SeqRanges } from '../functions/core/audit/seq-ranges.js';

const TOTAL = 10_000_000;

const gc = (globalThis as { gc?: () => void }).gc;

function measure<T extends { add(seq: number): unknown }>(
  make: () => T,
  describe: (s: T) => object,
) {
  gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  const target = make();
  for (let seq = 1; seq <= TOTAL; seq++) {
    if (seq % 10_000 === 5_000) continue; // 1,000 gaps
    target.add(seq);
    if (seq % 100_000 === 1) target.add(seq); // 100 duplicates
  }
  // 100 late arrivals filling gaps out of order.
  for (let i = 0; i < 100; i++) target.add(i * 100_000 + 5_000);
  const ms = performance.now() - started;
  gc?.();
  const heapDeltaBytes = process.memoryUsage().heapUsed - heapBefore;
  return { ms: Math.round(ms), heapDeltaBytes, gcExposed: gc !== undefined, ...describe(target) };
}

const ranges = measure(
  () => new SeqRanges(),
  (s) => ({ count: s.count, rangeCount: s.rangeCount }),
);
const counter = measure(
  () => new SeqCounter(),
  (c) => ({
    count: c.count,
    rangeCount: c.seen().rangeCount,
    duplicateRuns: c.duplicates().length,
  }),
);
process.stdout.write(
  `${JSON.stringify({ adds: TOTAL, node: process.version, ranges, counter })}\n`,
);
