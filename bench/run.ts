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
//   npm run bench                              the default sections
//   npm run bench -- --only publish,coldStart  chosen sections (not saved)
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startLocalStack } from '../infra/local/stack.js';
import { alive, machineFacts, note, ROOT } from './harness.js';

const SECTIONS = {
  publish: 'bench/publish.ts',
  audit: 'bench/audit.ts',
  auditHorizon: 'bench/audit-horizon.ts',
  reconcile: 'bench/reconcile.ts',
  coldStart: 'bench/cold-start.ts',
  workflows: 'bench/workflows.ts',
  seqAllocation: 'bench/seq-allocation.ts',
  ledgerShards: 'bench/ledger-shards.ts',
  fanOut: 'bench/fan-out.ts',
  once: 'bench/once.ts',
  schema: 'bench/schema.ts',
} as const;
type Section = keyof typeof SECTIONS;

/** Run when asked for by name only (see above). */
const ON_REQUEST: readonly Section[] = ['auditHorizon'];
const DEFAULT_SECTIONS = (Object.keys(SECTIONS) as Section[]).filter(
  (s) => !ON_REQUEST.includes(s),
);

function chosen(argv: readonly string[]): Section[] {
  const at = argv.indexOf('--only');
  if (at === -1) return DEFAULT_SECTIONS;
  const names = String(argv[at + 1] ?? '').split(',');
  const unknown = names.filter((n) => !(n in SECTIONS));
  if (unknown.length > 0 || names.length === 0) {
    throw new Error(
      `--only: some of ${Object.keys(SECTIONS).join(', ')}; not ${unknown.join(', ')}`,
    );
  }
  return names as Section[];
}

/** Runs one section in a process of its own; resolves with its JSON (stdout), stderr shown. */
function runSection(file: string, env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${file} exited with ${code}`));
      try {
        resolve(JSON.parse(out) as Record<string, unknown>);
      } catch (error) {
        reject(new Error(`${file} printed no JSON: ${String(error)}`));
      }
    });
  });
}

const sections = chosen(process.argv.slice(2));
const full = DEFAULT_SECTIONS.every((s) => sections.includes(s));
const started = performance.now();
const at = new Date().toISOString();
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const stack = await startLocalStack({ log: (line) => note(`stack: ${line}`), api: true });
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
  };
  for (const section of sections) {
    const t = performance.now();
    note(`— ${section} —`);
    try {
      results[section] = await runSection(SECTIONS[section], env);
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

const titles: Record<Section, string> = {
  publish: 'Publish',
  audit: 'Audit',
  auditHorizon: 'Audit checkpoint over 180 days',
  reconcile: 'Reconcile',
  coldStart: 'Cold start',
  workflows: 'Workflows at cluster size',
  seqAllocation: 'Seq allocation on one stream',
  ledgerShards: 'Ledger writes on one stream, each key held to 1,000 writes/s',
  fanOut: 'Fan-out beside one function (audit, reconcile)',
  once: 'Once guard: per-record overhead',
  schema: 'Schema serialization: per-record cost beside plain JSON',
};
const tables = sections
  .filter((s) => results[s])
  .map((s) => `### ${titles[s]} (${seconds[s]} s)\n\n${String(results[s]?.table ?? '')}`)
  .join('\n\n');
const summary = {
  benchmark: 'kafka-tally',
  at,
  machine: machineFacts(),
  sections: results,
  sectionSeconds: seconds,
  wallSeconds: Math.round((performance.now() - started) / 1000),
};
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
process.stderr.write(
  `\n${tables}\n\nmachine: ${JSON.stringify(summary.machine)}; ${summary.wallSeconds} s in all\n`,
);
if (full && exitCode === 0) {
  const dir = join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const stamp = at.replace(/[:.]/g, '-');
  writeFileSync(join(dir, `bench-${stamp}.json`), `${JSON.stringify(summary, null, 2)}\n`);
  writeFileSync(
    join(dir, `bench-${stamp}.md`),
    `# kafka-tally benchmarks, ${at}\n\nMachine: ${summary.machine.cpus} × ${summary.machine.cpuModel}, ${summary.machine.memoryGiB} GiB, Node ${summary.machine.node}, Kafka ${summary.machine.kafka}; ${summary.wallSeconds} s in all.\n\n${tables}\n`,
  );
  note(`results saved to bench/results/bench-${stamp}.{json,md}`);
}
process.exit(exitCode);
