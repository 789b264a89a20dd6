// Audit checkpoint size over a topic's life (issue 13): the checkpoint, gzipped as the store
// writes it, after 30, 90 and 180 days of traffic at 12 records a minute per stream, in 300 s
// buckets. Needs no stack: fake ports and a simulated clock. Never fails on a number.
//
//   node --import tsx bench/audit-horizon.ts
//
// - unfolded: every record read into a TopicLog and nothing folded — what the checkpoint held
//   before issue 13 (the issue's own measurement: 90/267/532 KB for one stream);
// - folded: 15-minute audits through createAuditor on fake ports (test/helpers/audit-simulation),
//   with the default 7-day retention horizon;
// - the unit test's 10 streams with planted duplicates, losses and redeliveries, at full traffic.

import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { TopicLog } from '../functions/core/audit/topic-log.js';
import { DAY, MINUTE, type Plant, simulate } from '../test/helpers/audit-simulation.js';
import { machineFacts, markdownTable, note, smokeOr, writeResults } from './harness.js';

const PER_MINUTE = 12;
const BUCKET_MS = 5 * MINUTE;
const AUDIT_EVERY_MS = 15 * MINUTE;
// BENCH_SMOKE=1: two simulated days, through the same code.
const DAYS = smokeOr([30, 90, 180], [1, 2]);
const LAST_DAY = DAYS[DAYS.length - 1] as number;

/** Gzipped checkpoint bytes after each of DAYS, reading every record into one TopicLog. */
function unfolded(streams: number): number[] {
  const state = new TopicLog('orders');
  const sizes: number[] = [];
  const gapMs = MINUTE / PER_MINUTE;
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  let seq = 0;
  for (const days of DAYS) {
    for (; seq * gapMs < days * DAY; seq++) {
      const timestamp = t0 + seq * gapMs;
      for (let s = 0; s < streams; s++) {
        state.countInBucket(timestamp, BUCKET_MS);
        const record = { seq: seq + 1, partition: s % 3, offset: seq, session: 'p-1', timestamp };
        state.stream(`stream-${s}`).add(record, BUCKET_MS, false);
      }
    }
    sizes.push(gzipSync(JSON.stringify(state.toJSON())).length);
  }
  return sizes;
}

async function folded(streams: number, plants: readonly Plant[] = []) {
  const started = performance.now();
  const result = await simulate({
    streams,
    days: LAST_DAY,
    auditEveryMs: AUDIT_EVERY_MS,
    recordsPerRun: (PER_MINUTE * AUDIT_EVERY_MS) / MINUTE,
    bucketMs: BUCKET_MS,
    plants,
  });
  return {
    sizes: DAYS.map((d) => result.checkpointBytesAfterDay[d] ?? 0),
    maxCheckpointBytes: result.maxCheckpointBytes,
    maxReportBytes: result.maxReportBytes,
    missed: result.missed.length,
    runs: result.runs,
    seconds: Math.round((performance.now() - started) / 1000),
  };
}

const RUNS_A_DAY = DAY / AUDIT_EVERY_MS;
const plants: Plant[] = smokeOr([1, 30, 90, 179], [0, 1]).flatMap((day, i) => [
  { run: day * RUNS_A_DAY + 7, stream: i % 10, kind: 'producerDuplicate' as const },
  { run: day * RUNS_A_DAY + 31, stream: (i + 3) % 10, kind: 'lost' as const },
  { run: day * RUNS_A_DAY + 60, stream: (i + 6) % 10, kind: 'redelivery' as const },
]);

const at = new Date().toISOString();
const rows: Array<{ case: string; sizes: number[]; max?: number; note?: string }> = [];
for (const streams of [1, 4]) {
  note(`unfolded, ${streams} stream(s)`);
  rows.push({ case: `${streams} stream(s), unfolded (before)`, sizes: unfolded(streams) });
  note(`folded, ${streams} stream(s): ${LAST_DAY * RUNS_A_DAY} audits`);
  const after = await folded(streams);
  rows.push({
    case: `${streams} stream(s), folded (after)`,
    sizes: after.sizes,
    max: after.maxCheckpointBytes,
    note: `${after.seconds} s`,
  });
}
note('folded, 10 streams with planted findings');
const ten = await folded(10, plants);
rows.push({
  case: '10 streams + plants, folded (after)',
  sizes: ten.sizes,
  max: ten.maxCheckpointBytes,
  note: `${ten.seconds} s; ${plants.length - ten.missed}/${plants.length} plants reported; report ≤ ${ten.maxReportBytes} B`,
});

const kb = (n: number | undefined) => (n === undefined ? '—' : `${(n / 1024).toFixed(1)} KB`);
const table = markdownTable(
  ['case (12 rec/min/stream, 300 s buckets)', ...DAYS.map((d) => `${d} days`), 'max', 'notes'],
  rows.map((r) => [r.case, ...r.sizes.map(kb), kb(r.max), r.note ?? '']),
);
const summary = { at, machine: machineFacts(), bucketMs: BUCKET_MS, rows, tenStreams: ten };
writeResults('audit-horizon', summary, table, true);
