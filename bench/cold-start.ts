// Cold start: per function of serverless.yml, the size of its esbuild bundle (built as
// serverless-esbuild builds it from serverless.yml's custom.esbuild; from the metafile) and
// the module-init time to a ready handler — a fresh Node process importing the bundle until the
// handler export exists, with configuration pointing at closed local ports so no network is
// waited for. Prints JSON; never fails on a number.
//
//   node --import tsx bench/cold-start.ts [--base <git ref>] [--functions produce,clusters]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { build } from 'esbuild';
import { parse } from 'yaml';
import { tableEnvironment } from '../infra/local/local-tables.js';
import { loadTableDefinitions, localTableName } from '../infra/local/table-definitions.js';
import {
  machineFacts,
  markdownTable,
  note,
  ROOT,
  SMOKE,
  shown,
  smokeOr,
  spread,
  writeResults,
} from './harness.js';

/**
 * BENCH_SMOKE=1: two functions (one whose schema codecs are a chunk of their own, one without
 * DynamoDB), one run each.
 */
const SMOKE_FUNCTIONS = new Set(['produce', 'clusters']);
/**
 * `--functions a,b` (or BENCH_COLD_START_FUNCTIONS): only these functions of serverless.yml, for
 * a few at a time on a loaded machine; the anchors are measured in every run.
 */
const functionsAt = process.argv.indexOf('--functions');
const chosenList =
  functionsAt === -1 ? process.env.BENCH_COLD_START_FUNCTIONS : process.argv[functionsAt + 1];
const CHOSEN = chosenList ? new Set(chosenList.split(',')) : SMOKE ? SMOKE_FUNCTIONS : undefined;

const started = performance.now();
// Inside the project, so the runtime-SDK anchor's bare imports of the AWS SDK resolve from
// node_modules (as in Lambda the runtime's copy would).
const cache = join(ROOT, 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const out = mkdtempSync(join(cache, 'tally-cold-start-'));

interface Serverless {
  provider: { environment: Record<string, string> };
  functions: Record<string, { handler: string }>;
  custom: {
    esbuild: {
      target: string;
      exclude: string[];
      banner: { js: string };
      minify?: boolean;
      keepNames?: boolean;
      sourcemap?: boolean;
      sourcesContent?: boolean;
      splitting?: boolean;
      mainFields?: string[];
    };
  };
}

/**
 * The bundles of a source tree (the working tree, or a commit extracted beside it), one per
 * handler module as serverless-esbuild makes one per function, with that tree's settings.
 */
async function buildTree(root: string, tag: string) {
  const serverless = parse(readFileSync(join(root, 'serverless.yml'), 'utf8')) as Serverless;
  const { esbuild } = serverless.custom;
  if (CHOSEN) {
    const unknown = [...CHOSEN].filter((name) => !Object.hasOwn(serverless.functions, name));
    if (unknown.length > 0 && tag === 'current') {
      throw new Error(`--functions: no such function in serverless.yml: ${unknown.join(', ')}`);
    }
    serverless.functions = Object.fromEntries(
      Object.entries(serverless.functions).filter(([name]) => CHOSEN.has(name)),
    );
  }
  const modules = [
    ...new Set(Object.values(serverless.functions).map((f) => handlerOf(f.handler).module)),
  ];
  const bundles = new Map<string, { file: string; bytes: number }>();
  for (const module of modules) {
    // A folder per bundle: with splitting, a bundle's chunks sit beside it.
    const dir = join(out, tag, module.replace(/\//g, '_'));
    const file = join(dir, `${basename(module)}.mjs`);
    const result = await build({
      absWorkingDir: root,
      entryPoints: [join(root, `${module}.ts`)],
      ...functionBundle(esbuild),
      outdir: dir,
      outExtension: { '.js': '.mjs' },
      metafile: true,
      logLevel: 'warning',
    });
    // What the cold start loads: the bundle and the chunks it imports statically (a chunk
    // reached by a dynamic import() only loads when that import runs).
    const outputs = result.metafile.outputs;
    const loaded = new Set([relative(root, file)]);
    for (const name of loaded) {
      for (const i of outputs[name]?.imports ?? []) {
        if (!i.external && i.kind === 'import-statement') loaded.add(i.path);
      }
    }
    const bytes = [...loaded].reduce((sum, name) => sum + (outputs[name]?.bytes ?? 0), 0);
    bundles.set(module, { file, bytes });
  }
  return { serverless, esbuild, bundles };
}

/** What serverless-esbuild bundles every function with (serverless.yml's custom.esbuild). */
function functionBundle(esbuild: Serverless['custom']['esbuild']) {
  return {
    bundle: true,
    platform: 'node',
    target: esbuild.target,
    format: 'esm',
    external: esbuild.exclude,
    banner: esbuild.banner,
    minify: esbuild.minify === true,
    keepNames: esbuild.keepNames === true,
    sourcemap: esbuild.sourcemap === true,
    sourcesContent: esbuild.sourcesContent !== false,
    splitting: esbuild.splitting === true,
    ...(esbuild.mainFields && { mainFields: esbuild.mainFields }),
  } as const;
}

function handlerOf(handler: string) {
  const dot = handler.lastIndexOf('.');
  return { module: handler.slice(0, dot), exportName: handler.slice(dot + 1) };
}

// `--base <git ref>` (or BENCH_COLD_START_BASE, through `npm run bench`): the same figures for that commit, measured in the same run, its probes
// alternating with the working tree's (on a shared machine, load moves between minutes).
const baseAt = process.argv.indexOf('--base');
const baseRef = baseAt === -1 ? process.env.BENCH_COLD_START_BASE : process.argv[baseAt + 1];
const current = await buildTree(ROOT, 'current');
let base: Awaited<ReturnType<typeof buildTree>> | undefined;
if (baseRef) {
  const tree = join(out, 'base-tree');
  mkdirSync(tree);
  execFileSync('sh', [
    '-c',
    `git archive ${JSON.stringify(baseRef)} functions serverless.yml | tar -x -C ${JSON.stringify(tree)}`,
  ]);
  base = await buildTree(tree, 'base');
}
const { serverless, esbuild } = current;
const REPEATS = smokeOr(base ? 5 : 3, 1);
const functions = Object.entries(serverless.functions).map(([name, fn]) => ({
  name,
  ...handlerOf(fn.handler),
}));
note(`bundles built in ${Math.round(performance.now() - started)} ms`);

// Configuration every function reads at module load; ports 9 and 1 are closed: nothing answers.
const env = {
  ...process.env,
  KAFKA_BROKERS: '127.0.0.1:9',
  DYNAMODB_ENDPOINT: 'http://127.0.0.1:1',
  AWS_REGION: 'us-east-1',
  LOG_LEVEL: 'error',
  TALLY_RECEIPTS_GROUP: 'bench',
  // serverless.yml's default: API Gateway's JWT authorizer (no token table to load).
  TALLY_AUTH: 'gateway',
  // As serverless.yml runs the functions (--enable-source-maps: source maps are read at load).
  NODE_OPTIONS: serverless.provider.environment.NODE_OPTIONS ?? '',
  // Every table of infra/resources/tables.yml, by the variable serverless.yml names it with.
  ...tableEnvironment(
    Object.fromEntries(
      loadTableDefinitions().map((t) => [t.logicalId, localTableName('bench-', t)]),
    ),
  ),
};
// Wall time, and the process's CPU time over the same span: on a shared machine the wall time
// includes waiting for a core, the CPU time does not (it does count V8's helper threads).
// An anchor may export `firstCall`: what its first request would do after init (an SDK client
// and one call, refused at once by the closed port), timed after the import the same way, so a
// cost moved from init into the first request shows there.
const probe = (file: string, exportName: string) => `
const cpu = process.cpuUsage();
const start = performance.now();
const module = await import(${JSON.stringify(`file://${file}`)});
if (typeof module[${JSON.stringify(exportName)}] !== 'function') throw new Error('no handler');
const wall = performance.now() - start;
const used = process.cpuUsage(cpu);
const times = [wall, (used.user + used.system) / 1000];
if (typeof module.firstCall === 'function') {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const outcome = await module.firstCall();
  if (outcome !== 'ECONNREFUSED') throw new Error('first call: ' + outcome);
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  times.push(wall, (used.user + used.system) / 1000);
}
process.stdout.write(JSON.stringify(times));
process.exit(0);`;

const initOf = (file: string, exportName: string) =>
  JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', probe(file, exportName)], {
      cwd: ROOT,
      env,
      encoding: 'utf8',
    }),
  ) as [number, number, number?, number?];

interface Runs {
  wall: number[];
  cpu: number[];
}
const runs = (): Runs => ({ wall: [], cpu: [] });
const add = (into: Runs, [wall, cpu]: [number, number, number?, number?]) => {
  into.wall.push(wall);
  into.cpu.push(cpu);
};

// Anchors: what loading the two libraries every Kafka-and-DynamoDB function needs costs by
// itself, bundled the same way; and the document client as the runtime provides it (left out of
// the bundle, loaded from node_modules' CommonJS files: serverless.yml's setting before issue 32).
const DOCUMENT_CLIENT = `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
export const handler = () => DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const firstCall = () =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: process.env.DYNAMODB_ENDPOINT,
      maxAttempts: 1,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  )
    .send(new GetCommand({ TableName: 'bench', Key: { id: 'a' } }))
    .then(() => 'answered', (error) => error.code ?? error.name);`;
const ANCHORS: Record<string, { contents: string; runtimeSdk?: true }> = {
  'anchor: AWS SDK DynamoDB document client alone': { contents: DOCUMENT_CLIENT },
  "anchor: the same, the runtime's SDK (external)": { contents: DOCUMENT_CLIENT, runtimeSdk: true },
  'anchor: kafkajs alone': {
    contents: `import { Kafka } from 'kafkajs';
export const handler = () => new Kafka({ brokers: ['127.0.0.1:9'] });`,
  },
  'anchor: both': {
    contents: `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Kafka } from 'kafkajs';
export const handler = () => [DynamoDBDocumentClient.from(new DynamoDBClient({})), new Kafka({ brokers: ['127.0.0.1:9'] })];`,
  },
};
const anchors = [];
for (const [name, { contents, runtimeSdk }] of Object.entries(ANCHORS)) {
  // A folder per anchor, as per function: code splitting (serverless.yml) needs an outdir.
  const dir = join(out, `anchor-${anchors.length}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'anchor.ts'), contents);
  const file = join(dir, 'anchor.mjs');
  await build({
    absWorkingDir: ROOT,
    entryPoints: [join(dir, 'anchor.ts')],
    ...functionBundle(esbuild),
    ...(runtimeSdk && { external: ['@aws-sdk/*'], mainFields: ['main', 'module'] }),
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    logLevel: 'warning',
  });
  const measured = runs();
  const first = runs();
  for (let r = 0; r < REPEATS; r++) {
    const [wall, cpu, firstWall, firstCpu] = initOf(file, 'handler');
    add(measured, [wall, cpu]);
    if (firstWall !== undefined && firstCpu !== undefined) add(first, [firstWall, firstCpu]);
  }
  anchors.push({
    function: name,
    initMs: spread(measured.wall),
    initCpuMs: spread(measured.cpu),
    ...(first.wall.length > 0 && {
      firstCallMs: spread(first.wall),
      firstCallCpuMs: spread(first.cpu),
    }),
  });
}

const results = [];
for (const fn of functions) {
  const bundle = current.bundles.get(fn.module) as { file: string; bytes: number };
  const baseFn = base && Object.hasOwn(base.serverless.functions, fn.name) ? base : undefined;
  const baseHandler = baseFn && handlerOf(baseFn.serverless.functions[fn.name]?.handler ?? '');
  const baseBundle = baseHandler && baseFn.bundles.get(baseHandler.module);
  const now = runs();
  const before = runs();
  for (let r = 0; r < REPEATS; r++) {
    if (baseBundle && baseHandler) add(before, initOf(baseBundle.file, baseHandler.exportName));
    add(now, initOf(bundle.file, fn.exportName));
  }
  results.push({
    function: fn.name,
    handler: `${fn.module}.${fn.exportName}`,
    bundleBytes: bundle.bytes,
    initMs: spread(now.wall),
    initCpuMs: spread(now.cpu),
    ...(baseBundle && {
      base: {
        bundleBytes: baseBundle.bytes,
        initMs: spread(before.wall),
        initCpuMs: spread(before.cpu),
      },
    }),
  });
}
rmSync(out, { recursive: true, force: true });

const summary = {
  benchmark: 'cold-start',
  at: new Date().toISOString(),
  machine: machineFacts(),
  setup: {
    ...(baseRef && { base: baseRef }),
    bundle: `esbuild, ESM, target ${esbuild.target}, external ${esbuild.exclude.join(', ')} (from the Lambda runtime or a layer), main fields ${(esbuild.mainFields ?? ['main', 'module']).join(', ')}, ${esbuild.minify ? `minified${esbuild.keepNames ? ' with keepNames' : ''}` : 'not minified'}`,
    init: `fresh node process per run, ${REPEATS} runs (alternating with the base's when given), NODE_OPTIONS=${env.NODE_OPTIONS}: import of the bundle to a handler export, configuration pointing at closed ports (no network waited for)`,
  },
  functions: results,
  anchors,
  wallSeconds: Math.round((performance.now() - started) / 1000),
};
const kb = (bytes: number) => Math.round(bytes / 1024).toLocaleString('en');
const functionsTable = base
  ? markdownTable(
      [
        'function',
        `bundle KB (${baseRef})`,
        'bundle KB',
        `module init ms (${baseRef})`,
        'module init ms',
        `init CPU ms (${baseRef})`,
        'init CPU ms',
      ],
      results.map((r) => [
        r.function,
        r.base ? kb(r.base.bundleBytes) : '–',
        kb(r.bundleBytes),
        r.base ? shown(r.base.initMs, 1) : '–',
        shown(r.initMs, 1),
        r.base ? shown(r.base.initCpuMs, 1) : '–',
        shown(r.initCpuMs, 1),
      ]),
    )
  : markdownTable(
      ['function', 'bundle KB', 'module init ms', 'init CPU ms'],
      results.map((r) => [
        r.function,
        kb(r.bundleBytes),
        shown(r.initMs, 1),
        shown(r.initCpuMs, 1),
      ]),
    );
// The anchors are built with the working tree's settings (the runtime-SDK one as before issue 32).
const anchorsTable = markdownTable(
  ['anchor', 'module init ms', 'init CPU ms', 'first call ms', 'first call CPU ms'],
  anchors.map((a) => [
    a.function,
    shown(a.initMs, 1),
    shown(a.initCpuMs, 1),
    a.firstCallMs ? shown(a.firstCallMs, 1) : '–',
    a.firstCallCpuMs ? shown(a.firstCallCpuMs, 1) : '–',
  ]),
);
writeResults('cold-start', summary, `${functionsTable}\n\n${anchorsTable}`, true);
