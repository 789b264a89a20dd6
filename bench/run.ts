// `npm run bench`: the benchmarks in one run against one local stack (Kafka, DynamoDB API and
// the HTTP API, started here or reused from KAFKA_BROKERS / DYNAMODB_ENDPOINT), each section in
// its own process, one after the other: publish (handler in-process, over the local HTTP API,
// raw kafkajs, kcat), audit (1 M and 10 M records beside a raw kafkajs consumer), reconcile
// (10, 100, 1,000 groups), cold start (bundle size and module init per function), workflows
// (both state machines under AWS's payload limits, simulated clusters up to 200,000
// partitions), seq allocation (one stream's seqs a second, counter alone and leased), ledger
// shards (one stream's ledger writes with each key held to 1,000 writes/s, before and after), fan-out
// (the audit and reconcile fan-outs beside one function: 1 M records on 16 partitions, 1,000
// groups), the once guard (per-record cost beside the same handler without it), schema
// serialization (Avro, Protobuf, JSON Schema per record beside plain JSON). Prints the
// collected JSON on stdout and the tables on stderr, saves both in bench/results/. A benchmark
// never fails on a number; this exits non-zero only when a section
// itself failed.
//
// The audit checkpoint over 180 simulated days (`auditHorizon`: no stack, 10–15 minutes of CPU
// on 2 cores, most of it re-measuring the unfolded checkpoint of before issue 13) is asked for
// by name, or with `npm run bench:horizon`, so the default run stays within 15 minutes.
//
// Each section writes its JSON to a file of its own (BENCH_RESULT_FILE), checked against the
// figures its table shows (sections.ts); its stdout (the functions' EMF metric and log lines)
// and the stack's events go to log files under bench/results/logs/<time>/ (or BENCH_LOG_DIR),
// named once on stderr. `--smoke` (BENCH_SMOKE=1) runs every section, auditHorizon included, at
// a tiny size in seconds through the same code: `npm test` runs it (bench-smoke.test.ts).
//
//   npm run bench                              the default sections
//   npm run bench -- --only publish,coldStart  chosen sections (not saved)
//   npm run bench -- --smoke                   every section at a tiny size (not saved)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startLocalStack } from '../infra/local/stack.js';
import { alive, machineFacts, note, ROOT } from './harness.js';
import { runSection } from './section-runner.js';
import { SECTIONS, type SectionName as Section } from './sections.js';

/** Run when asked for by name only (see above), and in the smoke run. */
const ON_REQUEST: readonly Section[] = ['auditHorizon'];
const DEFAULT_SECTIONS = (Object.keys(SECTIONS) as Section[]).filter(
  (s) => !ON_REQUEST.includes(s),
);
/** A smoke section that takes longer than this is stuck. */
const SMOKE_SECTION_TIMEOUT_MS = 150_000;

const argv = process.argv.slice(2);
const smoke = argv.includes('--smoke') || process.env.BENCH_SMOKE === '1';

function chosen(): Section[] {
  const at = argv.indexOf('--only');
  if (at === -1) return smoke ? (Object.keys(SECTIONS) as Section[]) : DEFAULT_SECTIONS;
  const names = String(argv[at + 1] ?? '').split(',');
  const unknown = names.filter((n) => !(n in SECTIONS));
  if (unknown.length > 0 || names.length === 0) {
    throw new Error(
      `--only: some of ${Object.keys(SECTIONS).join(', ')}; not ${unknown.join(', ')}`,
    );
  }
  return names as Section[];
}

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const sections = chosen();
const full = !smoke && DEFAULT_SECTIONS.every((s) => sections.includes(s));
const started = performance.now();
const at = new Date().toISOString();
const stamp = at.replace(/[:.]/g, '-');
const logDir = process.env.BENCH_LOG_DIR?.trim() || join(ROOT, 'bench/results/logs', stamp);
mkdirSync(logDir, { recursive: true });
note(`logs (the stack's events, each section's stdout and JSON): ${logDir}`);
const stackLog = join(logDir, 'stack.log');
// The stack's progress and events (every notification a scheduled reconcile puts on the local
// bus, in full) go to its log, not to stderr.
const stack = await startLocalStack({
  log: (line) => writeFileSync(stackLog, `${new Date().toISOString()} ${line}\n`, { flag: 'a' }),
  api: true,
});
note(`stack ready in ${Math.round(performance.now() - started)} ms`);
let exitCode = 0;
const results: Partial<Record<Section, Record<string, unknown>>> = {};
const seconds: Partial<Record<Section, number>> = {};
try {
  const env = {
    ...process.env,
    KAFKA_BROKERS: stack.kafkaBrokers,
    DYNAMODB_ENDPOINT: stack.dynamodbEndpoint,
    BENCH_API_URL: stack.apiUrl,
    BENCH_API_TOKEN: stack.apiToken,
    BENCH_COLLECTED: '1',
    ...(smoke && { BENCH_SMOKE: '1' }),
  };
  for (const section of sections) {
    const t = performance.now();
    note(`— ${section} —`);
    try {
      const { file, figures } = SECTIONS[section];
      results[section] = await runSection(section, {
        file,
        figures,
        env,
        logDir,
        cwd: ROOT,
        ...(smoke && { timeoutMs: SMOKE_SECTION_TIMEOUT_MS }),
      });
    } catch (error) {
      exitCode = 1;
      note(`${section} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    seconds[section] = Math.round((performance.now() - t) / 1000);
  }
} finally {
  await stack.stop();
  const left = stack.processes.filter((p) => alive(p.pid));
  if (left.length > 0) {
    exitCode = 1;
    note(`still running after stop: ${left.map((p) => p.name).join(', ')}`);
  }
}

const tables = sections
  .filter((s) => results[s])
  .map((s) => `### ${SECTIONS[s].title} (${seconds[s]} s)\n\n${String(results[s]?.table ?? '')}`)
  .join('\n\n');
const summary = {
  benchmark: 'kafka-tally',
  at,
  smoke,
  failed: sections.filter((s) => !results[s]),
  machine: machineFacts(),
  sections: results,
  sectionSeconds: seconds,
  wallSeconds: Math.round((performance.now() - started) / 1000),
};
// As the sections do: to BENCH_RESULT_FILE when given (bench-smoke.test.ts), else stdout.
const resultFile = process.env.BENCH_RESULT_FILE?.trim();
if (resultFile) writeFileSync(resultFile, `${JSON.stringify(summary, null, 2)}\n`);
else process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
process.stderr.write(
  `\n${tables}\n\nmachine: ${JSON.stringify(summary.machine)}; ${summary.wallSeconds} s in all\n`,
);
if (full && exitCode === 0) {
  const dir = join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `bench-${stamp}.json`), `${JSON.stringify(summary, null, 2)}\n`);
  writeFileSync(
    join(dir, `bench-${stamp}.md`),
    `# kafka-tally benchmarks, ${at}\n\nMachine: ${summary.machine.cpus} × ${summary.machine.cpuModel}, ${summary.machine.memoryGiB} GiB, Node ${summary.machine.node}, Kafka ${summary.machine.kafka}; ${summary.wallSeconds} s in all.\n\n${tables}\n`,
  );
  note(`results saved to bench/results/bench-${stamp}.{json,md}`);
}
process.exit(exitCode);
