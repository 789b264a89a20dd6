// Audit benchmark: records/s and peak RSS of one audit (the audit function's runtime, in a fresh
// process as in a new Lambda container) over 1 M and 10 M records, beside a bare kafkajs consumer
// scanning the same topic in the same run; then a second, incremental audit of the same topic
// (nothing new to read). Prints JSON and a Markdown table; never fails on a number.
//
//   node --import tsx bench/audit.ts                    1 M and 10 M (about 10 min with the stack)
//   node --import tsx bench/audit.ts --sizes 100000     chosen sizes only (no results file)
//   BENCH_AUDIT_BEFORE=<checkout> ... --sizes 1000000    also that checkout's audit in every pair
//
// The raw consumer is the floor: the audit scanner's consumer settings, each record decoded as
// far as the audit needs it, nothing accounted (bench/audit-child.ts). Each pair runs its
// children in a rotated order (the raw one first, then second, ...), so neither side always has
// the machine's warmer or quieter moment; every pair's ratio is reported.
//
// Per size: a topic of 4 partitions; records of 100 B values in blocks of 1,000 consecutive seqs,
// each block on one partition (as a publish request would send them), with `tally.*` headers; a
// ledger block per 1,000 seqs (ACKED at the offsets Kafka returned; the last 10 seqs UNKNOWN);
// the last 100 records re-sent by another producer session (100 producer-side duplicates); 10
// seqs ACKED in the ledger but never sent (lost); receipts of one group for all but the last
// 1,000 seqs, in items of 10,000 seqs (pending 1,000). Both children run with
// --max-old-space-size=448, the heap a 512 MB Lambda leaves.
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { createLedger } from '../functions/adapters/dynamodb/ledger.js';
import { createReceiptsStore } from '../functions/adapters/dynamodb/receipts-store.js';
import type { RecordOutcome } from '../functions/core/shared/outcomes.js';
import { createLocalTables, tableEnvironment } from '../infra/local/local-tables.js';
import {
  benchStack,
  bundle,
  machineFacts,
  note,
  parseSizes,
  ROOT,
  removeBundle,
  shown,
  smokeOr,
  spread,
  writeResults,
} from './harness.js';
import {
  auditBenchEnv,
  benchClients,
  tallyRecordsWriter,
  writeLedgerBlocks,
} from './tally-records.js';

// BENCH_SMOKE=1: one size of 10,000 records (the smallest), one pair.
const DEFAULT_SIZES = smokeOr<readonly number[]>([1_000_000, 10_000_000], [10_000]);
const PARTITIONS = 4;
const BLOCK = 1000;
const DUPLICATES = 100;
const LOST = 10;
const UNKNOWN = 10;
const UNPROCESSED = 1000;
const RECEIPT_SEQS = 10_000;
const HEAP_MB = 448;
/** Raw scan + audit pairs per size: three up to 1 M; one at 10 M (about 3 minutes a pair). */
const repeatsFor = (size: number) =>
  Number(process.env.BENCH_AUDIT_REPEATS ?? smokeOr(size <= 1_000_000 ? 3 : 1, 1));

interface ChildResult {
  readonly records: number;
  readonly wallMs: number;
  readonly firstBatchMs?: number;
  readonly peakRssMB: number;
  readonly complete?: boolean;
  readonly timingsMs?: Record<string, number>;
  readonly findings?: Record<string, number>;
}

// BENCH_CPU_PROFILE_DIR=<dir>: each child writes a .cpuprofile there (and the bundle is kept,
// for bench/cpuprofile-summary.ts to attribute samples to modules).
const profileDir = process.env.BENCH_CPU_PROFILE_DIR;
// BENCH_AUDIT_BEFORE=<dir>: a checkout of an earlier commit (with node_modules) whose audit runs
// in every pair too, so a change's before and after are measured in the same run.
const beforeDir = process.env.BENCH_AUDIT_BEFORE;

function child(bundleFile: string, env: Record<string, string>): ChildResult {
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const args = [...profile, `--max-old-space-size=${HEAP_MB}`, bundleFile];
  const out = execFileSync(process.execPath, args, {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 1 << 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out.trim().split('\n').pop() ?? '{}') as ChildResult;
}

const perSecond = (r: ChildResult) => Math.round((r.records / r.wallMs) * 1000);

const sizes = parseSizes(
  process.argv.slice(2),
  DEFAULT_SIZES,
  (n) => n >= 10 * BLOCK && n % BLOCK === 0,
  `multiples of ${BLOCK} from ${10 * BLOCK}`,
);
const fullRun = sizes.join(',') === DEFAULT_SIZES.join(',');
const runId = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
const started = performance.now();
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const { stack, reusing, stop } = await benchStack(`bench-audit-${runId}-`);
let exitCode = 0;
let bundleFile: string | undefined;
let beforeFile: string | undefined;
const { kafka, admin, dynamodb, documents } = benchClients(stack, 'tally-bench-audit');

try {
  await admin.connect();
  bundleFile = await bundle(join(ROOT, 'bench/audit-child.ts'), 'audit');
  if (beforeDir) beforeFile = await bundle(join(beforeDir, 'bench/audit-child.ts'), 'audit-before');
  const writeRecords = await tallyRecordsWriter(dirname(bundleFile));
  const value = Buffer.alloc(100, 'x');
  const results = [];
  for (const size of sizes) {
    const topic = `bench-audit-${runId}-n${size}`;
    const group = `bench-billing-${runId}`;
    const session = 'bench-session-1';
    const tables = await createLocalTables(dynamodb, `bench-audit-${runId}-n${size}-`);
    const ledger = createLedger(documents, tables.LedgerTable as string);
    const receipts = createReceiptsStore(documents, tables.ReceiptsTable as string);
    // A producer per size: kafkajs refreshes metadata for every topic a producer ever sent to,
    // and fails once one of them is deleted.
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: PARTITIONS }],
    });

    let t = performance.now();
    // The records come from the Java client (bench/java/TallyRecords.java): kafkajs would take
    // minutes to encode 10 M. Then one ledger block per 1,000 seqs, ACKED where Kafka put them.
    const run = {
      brokers: stack.kafkaBrokers,
      topic,
      session,
      records: size,
      block: BLOCK,
      partitions: PARTITIONS,
      valueBytes: 100,
    };
    const placed = writeRecords(run);
    const writtenMs = performance.now() - t;
    const blocks = placed.map(([firstSeq]) => firstSeq);
    await writeLedgerBlocks(ledger, run, placed, UNKNOWN);
    const produceMs = performance.now() - t;
    // Retries that crossed producer sessions, right after the originals.
    await producer.send({
      topic,
      acks: -1,
      messages: Array.from({ length: DUPLICATES }, (_, i) => ({
        partition: 0,
        value,
        headers: {
          'tally.stream': topic,
          'tally.seq': String(size - DUPLICATES + 1 + i),
          'tally.session': 'bench-session-2',
        },
      })),
    });
    await ledger.write({
      stream: topic,
      firstSeq: size + 1,
      topic,
      session,
      idempotencyKey: undefined,
      outcomes: Array.from(
        { length: LOST },
        (_, i): RecordOutcome => ({
          status: 'ACKED',
          partition: 0,
          offset: String(i),
        }),
      ),
    });
    await producer.disconnect();
    t = performance.now();
    const batches = [];
    for (let from = 1; from <= size - UNPROCESSED; from += RECEIPT_SEQS) {
      const to = Math.min(from + RECEIPT_SEQS - 1, size - UNPROCESSED);
      batches.push({
        group,
        stream: topic,
        topic,
        seqs: [[from, to] as const],
        offsets: [],
        count: to - from + 1,
      });
    }
    await receipts.writeAll(batches);
    note(
      `n=${size}: ${size + DUPLICATES} records in ${Math.round(writtenMs)} ms (Java client), ${blocks.length} ledger blocks by ${Math.round(produceMs)} ms; ${batches.length} receipts in ${Math.round(performance.now() - t)} ms`,
    );

    const env = {
      ...tableEnvironment(tables),
      ...auditBenchEnv(stack),
      BENCH_TOPIC: topic,
      BENCH_GROUP: group,
    };
    // Raw scan and audit (and the earlier audit) take turns, in an order rotated pair by pair;
    // each audit starts from no checkpoint (deleted before it).
    const raws: ChildResult[] = [];
    const audits: ChildResult[] = [];
    const befores: ChildResult[] = [];
    const runs = [
      { name: 'raw kafkajs', into: raws, file: bundleFile, mode: 'raw' },
      { name: 'audit', into: audits, file: bundleFile, mode: 'audit' },
      ...(beforeFile
        ? [{ name: 'audit before', into: befores, file: beforeFile, mode: 'audit' }]
        : []),
    ];
    for (let r = 0; r < repeatsFor(size); r++) {
      for (let k = 0; k < runs.length; k++) {
        const { name, into, file, mode } = runs[(r + k) % runs.length] as (typeof runs)[number];
        if (mode === 'audit') {
          await documents.send(
            new DeleteCommand({
              TableName: tables.AuditsTable,
              Key: { auditId: `checkpoint#${topic}` },
            }),
          );
        }
        const result = child(file, { ...env, BENCH_MODE: mode });
        note(
          `n=${size} #${r + 1} ${name}: ${result.records} records in ${Math.round(result.wallMs)} ms, ${result.peakRssMB} MB, ${JSON.stringify(result.timingsMs ?? { firstBatch: Math.round(result.firstBatchMs ?? 0) })}`,
        );
        into.push(result);
      }
      const ratio = (a: ChildResult) => (a.wallMs / (raws[r] as ChildResult).wallMs).toFixed(2);
      note(
        `n=${size} #${r + 1} audit ÷ raw time: ${ratio(audits[r] as ChildResult)}${beforeFile ? ` (before: ${ratio(befores[r] as ChildResult)})` : ''}; load ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
      );
    }
    const incremental = child(bundleFile, { ...env, BENCH_MODE: 'audit' });
    note(
      `n=${size} incremental audit: ${incremental.records} records in ${Math.round(incremental.wallMs)} ms, ${JSON.stringify(incremental.timingsMs)}`,
    );
    const overRaw = (list: readonly ChildResult[]) =>
      list.map((a, i) => a.wallMs / (raws[i] as ChildResult).wallMs);
    const first = audits[0] as ChildResult;
    const expected = {
      produced: size + LOST,
      inLog: size,
      producerDuplicates: DUPLICATES,
      namedWithBothCopies: DUPLICATES,
      lost: LOST,
      pending: UNPROCESSED,
      unknownLanded: UNKNOWN, // settled by the first run, so checked on it
    };
    const mismatches = Object.entries(expected)
      .filter(([k, v]) => first.findings?.[k] !== v)
      .map(([k, v]) => `${k}: ${first.findings?.[k]} (expected ${v})`);
    if (mismatches.length > 0) note(`n=${size}: findings differ: ${mismatches.join('; ')}`);
    const scanned = audits.every((a) => a.records === size + DUPLICATES && a.complete);
    if (!scanned) note(`n=${size}: an audit did not read every record`);
    results.push({
      records: size + DUPLICATES,
      runs: audits.length,
      raw: {
        recordsPerSecond: spread(raws.map(perSecond)),
        peakRssMB: spread(raws.map((r) => r.peakRssMB)),
      },
      audit: {
        recordsPerSecond: spread(audits.map(perSecond)),
        peakRssMB: spread(audits.map((a) => a.peakRssMB)),
        phasesMs: first.timingsMs,
        findings: first.findings,
      },
      auditOverRawTimePerPair: spread(overRaw(audits)),
      pairs: overRaw(audits).map((ratio) => Math.round(ratio * 1000) / 1000),
      ...(befores.length > 0 && {
        before: {
          recordsPerSecond: spread(befores.map(perSecond)),
          auditOverRawTimePerPair: spread(overRaw(befores)),
          pairs: overRaw(befores).map((ratio) => Math.round(ratio * 1000) / 1000),
          phasesMs: befores[0]?.timingsMs,
        },
      }),
      rawFirstBatchMs: spread(raws.map((r) => r.firstBatchMs ?? 0)),
      scanOverRawTimePerPair: spread(
        audits.map((a, i) => (a.timingsMs?.scan ?? 0) / (raws[i] as ChildResult).wallMs),
      ),
      incremental: { wallMs: Math.round(incremental.wallMs), peakRssMB: incremental.peakRssMB },
      findingsAsExpected: mismatches.length === 0 && scanned,
    });
    await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  }

  const summary = {
    benchmark: 'audit',
    at: new Date().toISOString(),
    machine: machineFacts(),
    stack: reusing ? 'reused' : 'started here',
    heapLimitMB: HEAP_MB,
    results,
    wallSeconds: Math.round((performance.now() - started) / 1000),
  };
  const table = [
    '| records | runs | raw kafkajs records/s | raw peak RSS MB | audit records/s | audit peak RSS MB | audit ÷ raw time (per pair) | incremental run, nothing new |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.records.toLocaleString('en')} | ${r.runs} | ${shown(r.raw.recordsPerSecond)} | ${shown(r.raw.peakRssMB)} | ${shown(r.audit.recordsPerSecond)} | ${shown(r.audit.peakRssMB)} | ${shown(r.auditOverRawTimePerPair, 2)}${r.before ? `; before: ${shown(r.before.auditOverRawTimePerPair, 2)}` : ''} | ${r.incremental.wallMs} ms |`,
    ),
  ].join('\n');
  writeResults('audit', summary, table, fullRun);
} catch (error) {
  exitCode = 1;
  note(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  await admin.disconnect().catch(() => {});
  dynamodb.destroy();
  if (bundleFile && profileDir) note(`bundle kept for the profiles: ${bundleFile}`);
  else if (bundleFile) removeBundle(bundleFile);
  if (beforeFile) removeBundle(beforeFile);
  if (!(await stop())) exitCode = 1;
}
process.exit(exitCode);
