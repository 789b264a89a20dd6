// Scaffolding shared by the benchmarks: the local stack (started here, or reused from
// KAFKA_BROKERS / DYNAMODB_ENDPOINT) with a check that nothing it started is left running,
// esbuild bundles of our functions (Node's ESM loader cannot import kafkajs's CommonJS named
// exports from the sources), and machine facts for the results.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { build } from 'esbuild';
import { startDynamoDbServer } from '../infra/local/dynamodb-server.js';
import { createLocalTables, localDynamoDbClient } from '../infra/local/local-tables.js';
import { waitForDynamoDb } from '../infra/local/readiness.js';
import { startLocalStack } from '../infra/local/stack.js';

export const note = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** `--name N` from argv, a positive integer, else `fallback`. */
export function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  if (at === -1) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new Error(`--${name}: a positive integer, got ${String(process.argv[at + 1])}`);
  }
  return value;
}
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * BENCH_SMOKE=1 (`npm run bench -- --smoke`): every section in seconds, through the same code
 * paths (tiny record counts, one repeat, the smallest sizes). Its figures mean nothing and are
 * never saved; test/integration/bench-smoke.test.ts checks that each section still prints them.
 */
export const SMOKE = process.env.BENCH_SMOKE === '1';
export const smokeOr = <T>(full: T, smoke: T): T => (SMOKE ? smoke : full);

const writeStdout = process.stdout.write.bind(process.stdout);

/**
 * From here on, what this process writes to stdout — the handlers' EMF metric lines and log
 * lines, which Lambda sends to CloudWatch — goes to a log file instead: BENCH_LOG_FILE (bench/run.ts
 * names one per section, where the section's own stdout goes too), else
 * bench/results/logs/<name>-<time>.log; its path is noted once. So stdout carries the section's
 * JSON only (writeResults). Returns the file.
 */
export function logStdoutToFile(name: string): string {
  const given = process.env.BENCH_LOG_FILE?.trim();
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = given || join(ROOT, 'bench/results/logs', `${name}-${stamp}.log`);
  mkdirSync(dirname(file), { recursive: true });
  const fd = openSync(file, 'a');
  // Synchronous: nothing is lost at process.exit, and one write(2) to a file costs microseconds.
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    writeSync(fd, typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    const done = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
    if (done) process.nextTick(done);
    return true;
  }) as typeof process.stdout.write;
  if (!given)
    note(`${name}: what the functions write to stdout (EMF metrics, logs) goes to ${file}`);
  return file;
}

export function javaProcesses(): string[] {
  try {
    return execFileSync('pgrep', ['-a', 'java'], { encoding: 'utf8' }).trim().split('\n');
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The stack for one benchmark run; `stop()` says (and returns false) if anything is left. */
export async function benchStack(tablePrefix: string) {
  const reusing = Boolean(
    process.env.KAFKA_BROKERS?.trim() && process.env.DYNAMODB_ENDPOINT?.trim(),
  );
  const javaBefore = javaProcesses();
  const stack = await startLocalStack({ log: (line) => note(`stack: ${line}`), tablePrefix });
  const ours = new Set(stack.processes.map((managed) => String(managed.pid)));
  const otherJava = javaBefore.filter((line) => !ours.has(line.split(' ')[0] ?? ''));
  if (otherJava.length > 0) {
    note(`${otherJava.length} java process(es) not started by this run: figures will be noisy`);
  }
  return {
    stack,
    reusing,
    async stop(): Promise<boolean> {
      if (reusing) return true;
      await stack.stop();
      const left = stack.processes.filter((managed) => alive(managed.pid));
      if (left.length > 0) {
        note(`still running after stop: ${left.map((m) => `${m.name} (pid ${m.pid})`).join(', ')}`);
        return false;
      }
      note(javaProcesses().length === 0 ? 'stack stopped; no java process left' : 'stack stopped');
      return true;
    },
  };
}

/**
 * Bundles an entry module — a file, or `{ contents }` (TypeScript re-exports, resolved from the
 * project root) — as ESM with everything inside, into a temp dir; returns the file.
 */
export async function bundle(entry: string | { contents: string }, name: string): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), `tally-bench-${name}-`)), `${name}.mjs`);
  await build({
    absWorkingDir: ROOT,
    ...(typeof entry === 'string'
      ? { entryPoints: [entry] }
      : {
          stdin: {
            contents: entry.contents,
            resolveDir: ROOT,
            sourcefile: `${name}-entry.ts`,
            loader: 'ts' as const,
          },
        }),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
    outfile: file,
    logLevel: 'warning',
  });
  return file;
}

export function removeBundle(file: string): void {
  rmSync(dirname(file), { recursive: true, force: true });
}

/** Facts about the machine that belong beside every figure. */
export function machineFacts() {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    kafka: '3.9.1 (single-node KRaft, local)',
    loadAverage1m: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

/** Runs `work` over items with at most `limit` at once. */
export async function pool<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  });
  await Promise.all(runners);
}

/** `--sizes a,b,c` from argv (each checked by `valid`, described by `what`), else `defaults`. */
export function parseSizes(
  argv: readonly string[],
  defaults: readonly number[],
  valid: (n: number) => boolean = (n) => n >= 1,
  what = 'positive integers',
): number[] {
  const at = argv.indexOf('--sizes');
  if (at === -1) return [...defaults];
  const sizes = String(argv[at + 1] ?? '')
    .split(',')
    .map(Number);
  if (sizes.length === 0 || sizes.some((n) => !Number.isSafeInteger(n) || !valid(n))) {
    throw new Error(`--sizes: comma-separated ${what}, got ${String(argv[at + 1])}`);
  }
  return sizes;
}

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

/** The time covered by at least one of `spans` ([from, to], any order, overlapping or not). */
export function unionMs(spans: ReadonlyArray<readonly [number, number]>): number {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  let total = 0;
  let end = Number.NEGATIVE_INFINITY;
  for (const [from, to] of sorted) {
    if (to <= end) continue;
    total += to - Math.max(from, end);
    end = to;
  }
  return total;
}

/** Median, min and max of repeated measurements (rounded to 3 decimals). */
export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (i: number) => sorted[i] as number;
  const mid = sorted.length / 2;
  const median = sorted.length % 2 ? at(Math.floor(mid)) : (at(mid - 1) + at(mid)) / 2;
  const r = (n: number) => Math.round(n * 1000) / 1000;
  return { median: r(median), min: r(at(0)), max: r(at(sorted.length - 1)), n: sorted.length };
}

/** "median (min–max)" for a table, or the single value when there was one run. */
export function shown(s: Spread, digits = 0): string {
  const f = (n: number) => n.toLocaleString('en', { maximumFractionDigits: digits });
  return s.n === 1 ? `${f(s.median)} (n=1)` : `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

/**
 * A markdown table of `rows` under `columns`: the first column (a label) left-aligned, the
 * others (figures) right-aligned; with `allFigures`, the first one too.
 */
export function markdownTable(
  columns: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  allFigures = false,
): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  const align = columns.map((_, i) => (i === 0 && !allFigures ? '---' : '---:'));
  return [line(columns), `|${align.join('|')}|`, ...rows.map(line)].join('\n');
}

/**
 * Writes a benchmark's JSON to BENCH_RESULT_FILE (bench/run.ts names one per section: a file
 * nothing else writes to), else on stdout, and its table on stderr; unless bench/run.ts collects
 * it (BENCH_COLLECTED=1), the run was partial or a smoke run, also saves both in bench/results/.
 */
export function writeResults(name: string, summary: { at: string }, table: string, full: boolean) {
  const json = `${JSON.stringify({ ...summary, table }, null, 2)}\n`;
  const resultFile = process.env.BENCH_RESULT_FILE?.trim();
  if (resultFile) writeFileSync(resultFile, json);
  else writeStdout(json);
  process.stderr.write(`\n${table}\n`);
  if (!full || SMOKE || process.env.BENCH_COLLECTED === '1') return;
  const dir = join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}-${summary.at.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify({ ...summary, table }, null, 2)}\n`);
  note(`results saved to ${file}`);
}

/**
 * The DynamoDB API alone for a bench (DYNAMODB_ENDPOINT's, else a dynalite of its own in a temp
 * dir) with fresh tables named `<prefix>…`; `stop()` ends what it started.
 */
export async function benchDynamoDb(prefix: string) {
  const workDir = mkdtempSync(join(tmpdir(), `tally-bench-${prefix}`));
  const given = process.env.DYNAMODB_ENDPOINT?.trim();
  const server = given ? undefined : await startDynamoDbServer(workDir);
  const endpoint = given || (server?.endpoint as string);
  await waitForDynamoDb(endpoint, { timeoutMs: 30_000 });
  const client = localDynamoDbClient(endpoint);
  return {
    client,
    documents: DynamoDBDocumentClient.from(client),
    tables: await createLocalTables(client, prefix),
    async stop(): Promise<void> {
      client.destroy();
      await server?.process.stop();
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}
