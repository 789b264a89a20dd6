// Cold start: per function of serverless.yml, the size of its esbuild bundle (built as
// serverless-esbuild builds it: ESM, node22, AWS SDK left to the runtime; from the metafile) and
// the module-init time to a ready handler — a fresh Node process importing the bundle until the
// handler export exists, with configuration pointing at closed local ports so no network is
// waited for. Prints JSON; never fails on a number.
//
//   node --import tsx bench/cold-start.ts
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { build } from 'esbuild';
import { parse } from 'yaml';
import { tableEnvironment } from '../infra/local/local-tables.js';
import { loadTableDefinitions, localTableName } from '../infra/local/table-definitions.js';
import { machineFacts, markdownTable, note, ROOT, shown, spread, writeResults } from './harness.js';

const REPEATS = 3;
const started = performance.now();
const serverless = parse(readFileSync(join(ROOT, 'serverless.yml'), 'utf8')) as {
  functions: Record<string, { handler: string }>;
  custom: { esbuild: { target: string; exclude: string[]; banner: { js: string } } };
};
const { esbuild } = serverless.custom;
// Inside the project, so the bundles' bare imports of the AWS SDK resolve from node_modules (in
// Lambda the runtime provides it).
const cache = join(ROOT, 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const out = mkdtempSync(join(cache, 'tally-cold-start-'));

const functions = Object.entries(serverless.functions).map(([name, fn]) => {
  const dot = fn.handler.lastIndexOf('.');
  return { name, module: fn.handler.slice(0, dot), exportName: fn.handler.slice(dot + 1) };
});
const modules = [...new Set(functions.map((f) => f.module))];

// One bundle per handler module, as serverless-esbuild makes one per function.
const bundles = new Map<string, { file: string; bytes: number }>();
for (const module of modules) {
  const file = join(out, `${module.replace(/\//g, '_')}.mjs`);
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, `${module}.ts`)],
    bundle: true,
    platform: 'node',
    target: esbuild.target,
    format: 'esm',
    external: esbuild.exclude,
    banner: esbuild.banner,
    outfile: file,
    metafile: true,
    logLevel: 'warning',
  });
  const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
  bundles.set(module, { file, bytes });
}
note(`${modules.length} bundles built in ${Math.round(performance.now() - started)} ms`);

// Configuration every function reads at module load; ports 9 and 1 are closed: nothing answers.
const env = {
  ...process.env,
  KAFKA_BROKERS: '127.0.0.1:9',
  DYNAMODB_ENDPOINT: 'http://127.0.0.1:1',
  AWS_REGION: 'us-east-1',
  LOG_LEVEL: 'error',
  TALLY_RECEIPTS_GROUP: 'bench',
  // Every table of infra/resources/tables.yml, by the variable serverless.yml names it with.
  ...tableEnvironment(
    Object.fromEntries(
      loadTableDefinitions().map((t) => [t.logicalId, localTableName('bench-', t)]),
    ),
  ),
};
const probe = (file: string, exportName: string) => `
const start = performance.now();
const module = await import(${JSON.stringify(`file://${file}`)});
if (typeof module[${JSON.stringify(exportName)}] !== 'function') throw new Error('no handler');
process.stdout.write(String(performance.now() - start));
process.exit(0);`;

const results = [];
for (const fn of functions) {
  const bundle = bundles.get(fn.module) as { file: string; bytes: number };
  const initMs: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const ms = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', probe(bundle.file, fn.exportName)],
      {
        cwd: ROOT,
        env,
        encoding: 'utf8',
      },
    );
    initMs.push(Number(ms));
  }
  results.push({
    function: fn.name,
    handler: `${fn.module}.${fn.exportName}`,
    bundleBytes: bundle.bytes,
    initMs: spread(initMs),
  });
}
rmSync(out, { recursive: true, force: true });

const summary = {
  benchmark: 'cold-start',
  at: new Date().toISOString(),
  machine: machineFacts(),
  setup: {
    bundle: `esbuild, ESM, target ${esbuild.target}, external ${esbuild.exclude.join(', ')} (the Lambda runtime provides it), not minified`,
    init: `fresh node process per run, ${REPEATS} runs: import of the bundle to a handler export, configuration pointing at closed ports (no network waited for)`,
  },
  functions: results,
  wallSeconds: Math.round((performance.now() - started) / 1000),
};
const table = markdownTable(
  ['function', 'bundle KB', 'module init ms'],
  results.map((r) => [
    r.function,
    Math.round(r.bundleBytes / 1024).toLocaleString('en'),
    shown(r.initMs, 1),
  ]),
);
writeResults('cold-start', summary, table, true);
