// Fan-out benchmark: one sequential run beside the fan-out state machine over the same data, in
// the same run, on the local stack — (a) the audit of a topic of many partitions (the audit task
// vs audit-fan-out), (b) the reconcile of many consumer groups (the reconcile task vs
// reconcile-fan-out). The state machines run in the local Step Functions runner; every task runs
// in a pool of worker threads with the functions' esbuild bundle loaded, one thread per Lambda
// container (each its own event loop, runtime and connections, as a warm container), so children
// really run in parallel — on as many cores as the machine has: with 2 cores, the speed-up is
// bounded by 2 (and by the broker and dynalite, which share those cores). The sequential run
// goes through the same pool (one task, one thread). Prints JSON and a Markdown table; never
// fails on a number.
//
//   node --import tsx bench/fan-out.ts                                    1 M records, 1,000 groups
//   node --import tsx bench/fan-out.ts --records 200000 --groups 200      chosen sizes (no results file)
//
// Audit data: a topic of 16 partitions written by the Java client (bench/java/TallyRecords.java:
// 100 B values in blocks of 1,000 seqs, `tally.*` headers), a ledger block per 1,000 seqs ACKED
// where Kafka put them. Each mode audits from no checkpoint (an audits table of its own).
// Reconcile data: groups of 10 partitions each, committed one record behind (Empty, no member);
// each mode reconciles them first (tables of its own, empty history). The sequential reconcile
// is one child doing every group (reconcile-fan-out with `shards: 1`, scoped to the bench's
// groups as the fan-out is: the shared broker may hold other groups).
import { cpus } from 'node:os';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createLedger } from '../functions/adapters/dynamodb/ledger.js';
import { createLocalTables, tableEnvironment } from '../infra/local/local-tables.js';
import type { Invoke } from '../infra/local/payload-limits.js';
import { createLocalStepFunctions } from '../infra/local/step-functions.js';
import {
  benchStack,
  bundle,
  machineFacts,
  markdownTable,
  note,
  pool,
  removeBundle,
  smokeOr,
  writeResults,
} from './harness.js';
import {
  auditBenchEnv,
  benchClients,
  tallyRecordsWriter,
  writeLedgerBlocks,
} from './tally-records.js';

const argv = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = argv.indexOf(name);
  if (at === -1) return fallback;
  const n = Number(argv[at + 1]);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name}: a positive integer`);
  return n;
};
// BENCH_SMOKE=1: 16,000 records (a block per partition), 8 groups (one per shard).
const DEFAULT_RECORDS = smokeOr(1_000_000, 16_000);
const DEFAULT_GROUPS = smokeOr(1000, 8);
const RECORDS = option('--records', DEFAULT_RECORDS);
const GROUPS = option('--groups', DEFAULT_GROUPS);
const fullRun = RECORDS === DEFAULT_RECORDS && GROUPS === DEFAULT_GROUPS;
const TOPIC_PARTITIONS = 16;
const PARTITIONS_PER_CHILD = 4;
const BLOCK = 1000;
const GROUP_PARTITIONS = 10;
const SHARDS = 8;
/** Worker threads: Lambda containers (more than the cores: children also wait on I/O). */
const CONTAINERS = 4;
const SETUP_CONCURRENCY = 100;

const runId = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
const at = new Date().toISOString();

// ---------------------------------------------------------------------------------------------
// The functions, as Lambda containers: one bundle, loaded by each worker thread.

const ENTRY = [
  "export { handler as audit } from './functions/audit/task-handler.js';",
  "export { handler as fanOutPlan } from './functions/audit/fan-out-plan.js';",
  "export { handler as fanOutChild } from './functions/audit/fan-out-child.js';",
  "export { handler as fanOutMerge } from './functions/audit/fan-out-merge.js';",
  "export { handler as reconcile } from './functions/reconcile/task-handler.js';",
  "export { handler as reconcileFanOutPlan } from './functions/reconcile/fan-out-plan.js';",
  "export { handler as reconcileFanOutChild } from './functions/reconcile/fan-out-child.js';",
  "export { handler as reconcileFanOutMerge } from './functions/reconcile/fan-out-merge.js';",
].join('\n');

// CommonJS, evaluated in each thread: stdout dropped (EMF metric lines: ours carries JSON).
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
process.stdout.write = () => true;
import(workerData.bundle).then((functions) => {
  parentPort.on('message', async ({ id, fn, payload }) => {
    const end = Date.now() + 900000;
    const context = {
      callbackWaitsForEmptyEventLoop: false, functionName: fn, functionVersion: '$LATEST',
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:' + fn,
      memoryLimitInMB: '1024', awsRequestId: 'bench-' + id, logGroupName: 'bench',
      logStreamName: 'bench', getRemainingTimeInMillis: () => end - Date.now(),
      done() {}, fail() {}, succeed() {},
    };
    try {
      parentPort.postMessage({ id, ok: true, result: await functions[fn](payload, context) });
    } catch (error) {
      parentPort.postMessage({ id, ok: false, name: error && error.name, message: String(error && error.message) });
    }
  });
  parentPort.postMessage({ ready: true });
});
`;

interface Containers {
  readonly invoke: Invoke;
  /** Invocations per thread, to see the children spread. */
  readonly calls: number[];
  close(): Promise<void>;
}

/** `count` threads with the bundle loaded under `env`; each invocation goes to a free one. */
async function containers(file: string, env: Record<string, string>, count: number) {
  const threads = await Promise.all(
    Array.from({ length: count }, async () => {
      const worker = new Worker(WORKER, {
        eval: true,
        env: { ...process.env, ...env },
        workerData: { bundle: pathToFileURL(file).href },
      });
      await new Promise<void>((resolve, reject) => {
        worker.once('message', () => resolve());
        worker.once('error', reject);
      });
      return worker;
    }),
  );
  const free = threads.map((_, i) => i);
  const waiting: Array<(i: number) => void> = [];
  const calls = threads.map(() => 0);
  let nextId = 0;
  const take = () =>
    new Promise<number>((resolve) => {
      const i = free.shift();
      if (i === undefined) waiting.push(resolve);
      else resolve(i);
    });
  const release = (i: number) => {
    const next = waiting.shift();
    if (next) next(i);
    else free.push(i);
  };
  const invoke: Invoke = async (fn, payload) => {
    const i = await take();
    calls[i] = (calls[i] ?? 0) + 1;
    const worker = threads[i] as Worker;
    const id = nextId++;
    try {
      return await new Promise((resolve, reject) => {
        const answer = (message: {
          id: number;
          ok: boolean;
          result?: unknown;
          name?: string;
          message?: string;
        }) => {
          if (message.id !== id) return;
          worker.off('message', answer);
          if (message.ok) resolve(message.result);
          else reject(Object.assign(new Error(message.message), { name: message.name }));
        };
        worker.on('message', answer);
        worker.postMessage({ id, fn, payload });
      });
    } finally {
      release(i);
    }
  };
  return {
    invoke,
    calls,
    close: async () => {
      await Promise.all(threads.map((t) => t.terminate()));
    },
  } satisfies Containers;
}

const ms = (t: number) => Math.round(performance.now() - t);

/** Runs `machine` to its end through `invoke`; its output and wall time. */
async function execute(invoke: Invoke, machine: string, input: unknown) {
  const sfn = createLocalStepFunctions({ invoke });
  const t = performance.now();
  const started = sfn.start(machine, input);
  const done = await sfn.settled(machine, started.name, 30 * 60_000);
  if (done.status !== 'SUCCEEDED') throw new Error(`${machine}: ${done.error}: ${done.cause}`);
  const map = done.history.find((e) => e.type === 'MapRunFinished') as
    | { mapRun?: { items: number; peakConcurrency: number } }
    | undefined;
  return { output: done.output as Record<string, unknown>, wallMs: ms(t), mapRun: map?.mapRun };
}

// ---------------------------------------------------------------------------------------------

const { stack, stop } = await benchStack(`bench-fan-out-${runId}-`);
let exitCode = 0;
let bundleFile: string | undefined;
const { kafka, admin, dynamodb, documents } = benchClients(stack, 'tally-bench-fan-out');
const baseEnv = {
  ...auditBenchEnv(stack),
  TALLY_MAPPING_GRACE_SECONDS: '0',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

/** Sequential task, then the state machine, each on its own tables and threads. */
async function sideBySide(
  file: string,
  tablesOf: (mode: string) => Promise<Record<string, string>>,
  sequential: (invoke: Invoke) => Promise<{ output: unknown; wallMs: number }>,
  fanOut: (invoke: Invoke) => ReturnType<typeof execute>,
) {
  const seqPool = await containers(file, { ...baseEnv, ...(await tablesOf('seq')) }, CONTAINERS);
  const seq = await sequential(seqPool.invoke).finally(() => seqPool.close());
  const fanPool = await containers(file, { ...baseEnv, ...(await tablesOf('fan')) }, CONTAINERS);
  const fan = await fanOut(fanPool.invoke).finally(() => fanPool.close());
  return { seq, fan: { ...fan, callsPerContainer: fanPool.calls } };
}

async function reconcileSection(file: string) {
  const topic = `bench-fan-out-${runId}-groups`;
  const prefix = `bench-fan-out-${runId}-g`;
  let t = performance.now();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic, numPartitions: GROUP_PARTITIONS }],
  });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  await producer.send({
    topic,
    acks: -1,
    messages: Array.from({ length: GROUP_PARTITIONS * 3 }, (_, i) => ({
      partition: i % GROUP_PARTITIONS,
      value: `record-${i}`,
    })),
  });
  await producer.disconnect();
  const partitions = Array.from({ length: GROUP_PARTITIONS }, (_, partition) => ({
    partition,
    offset: '2',
  }));
  const groups = Array.from({ length: GROUPS }, (_, i) => `${prefix}${i}`);
  await pool(groups, SETUP_CONCURRENCY, (groupId) =>
    admin.setOffsets({ groupId, topic, partitions }),
  );
  note(`reconcile: ${GROUPS} groups × ${GROUP_PARTITIONS} partitions ready in ${ms(t)} ms`);
  t = performance.now();
  const { seq, fan } = await sideBySide(
    file,
    async (mode) => tableEnvironment(await createLocalTables(dynamodb, `${prefix}${mode}-`)),
    // One function over all the bench's groups: the same state machine with one shard (the
    // reconcile task would also read any other groups the shared broker holds).
    (invoke) => execute(invoke, 'reconcile-fan-out', { shards: 1, prefix }),
    (invoke) => execute(invoke, 'reconcile-fan-out', { shards: SHARDS, prefix }),
  );
  const s = seq.output as { groups: number; partitions: number; statuses: object };
  const f = fan.output as { groups: number; partitions: number; statuses: object };
  note(`reconcile: sequential ${seq.wallMs} ms, fan-out ${fan.wallMs} ms (${ms(t)} ms in all)`);
  return {
    groups: GROUPS,
    partitions: GROUPS * GROUP_PARTITIONS,
    shards: SHARDS,
    sequentialMs: seq.wallMs,
    fanOutMs: fan.wallMs,
    speedUp: Math.round((seq.wallMs / fan.wallMs) * 100) / 100,
    sameSummary:
      s.groups === f.groups &&
      s.partitions === f.partitions &&
      JSON.stringify(s.statuses) === JSON.stringify(f.statuses),
    sequential: { groups: s.groups, partitions: s.partitions, statuses: s.statuses },
    fanOut: {
      groups: f.groups,
      partitions: f.partitions,
      statuses: f.statuses,
      mapRun: fan.mapRun,
      callsPerContainer: fan.callsPerContainer,
    },
  };
}

async function auditSection(file: string) {
  const topic = `bench-fan-out-${runId}-audit`;
  const tables = await createLocalTables(dynamodb, `bench-fan-out-${runId}-audit-`);
  const fanAudits = await createLocalTables(dynamodb, `bench-fan-out-${runId}-audit-fan-`);
  await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic, numPartitions: TOPIC_PARTITIONS }],
  });
  const writeRecords = await tallyRecordsWriter(dirname(file));
  let t = performance.now();
  const run = {
    brokers: stack.kafkaBrokers,
    topic,
    session: 'bench-session-1',
    records: RECORDS,
    block: BLOCK,
    partitions: TOPIC_PARTITIONS,
    valueBytes: 100,
  };
  await writeLedgerBlocks(
    createLedger(documents, tables.LedgerTable as string),
    run,
    writeRecords(run),
  );
  note(`audit: ${RECORDS} records on ${TOPIC_PARTITIONS} partitions with ledger in ${ms(t)} ms`);
  t = performance.now();
  // One ledger, streams and receipts tables; an audits table (checkpoint, reports) per mode.
  const { seq, fan } = await sideBySide(
    file,
    async (mode) => ({
      ...tableEnvironment(tables),
      ...(mode === 'fan' && { TALLY_AUDITS_TABLE: fanAudits.AuditsTable as string }),
    }),
    async (invoke) => {
      const start = performance.now();
      const output = await invoke('audit', { topic });
      return { output, wallMs: ms(start) };
    },
    (invoke) =>
      execute(invoke, 'audit-fan-out', { topic, partitionsPerChild: PARTITIONS_PER_CHILD }),
  );
  const s = (seq.output as { audits: Array<Record<string, unknown>> }).audits[0] ?? {};
  const f = fan.output;
  note(`audit: sequential ${seq.wallMs} ms, fan-out ${fan.wallMs} ms (${ms(t)} ms in all)`);
  return {
    records: RECORDS,
    partitions: TOPIC_PARTITIONS,
    children: TOPIC_PARTITIONS / PARTITIONS_PER_CHILD,
    sequentialMs: seq.wallMs,
    fanOutMs: fan.wallMs,
    speedUp: Math.round((seq.wallMs / fan.wallMs) * 100) / 100,
    sameSummary: s.scanned === f.scanned && s.complete === f.complete,
    sequential: { scanned: s.scanned, complete: s.complete },
    fanOut: {
      scanned: f.scanned,
      complete: f.complete,
      mapRun: fan.mapRun,
      callsPerContainer: fan.callsPerContainer,
    },
  };
}

try {
  await admin.connect();
  bundleFile = await bundle({ contents: ENTRY }, 'fan-out');
  // Reconcile first: the audit's scans leave no groups, but the reconcile runs see every group.
  const reconcile = await reconcileSection(bundleFile);
  const audit = await auditSection(bundleFile);
  const cores = cpus().length;
  const bound = `${cores} cores: the children share them with each other, the broker and dynalite, so the speed-up is at most ${cores}× here; Lambda gives each child its own`;
  const table = markdownTable(
    ['run', 'size', 'sequential ms', 'fan-out ms', 'speed-up', 'same summary'],
    [
      [
        'audit',
        `${RECORDS.toLocaleString('en')} records, ${TOPIC_PARTITIONS} partitions, ${audit.children} children`,
        String(audit.sequentialMs),
        String(audit.fanOutMs),
        `${audit.speedUp}×`,
        String(audit.sameSummary),
      ],
      [
        'reconcile',
        `${GROUPS.toLocaleString('en')} groups × ${GROUP_PARTITIONS} partitions, ${SHARDS} shards`,
        String(reconcile.sequentialMs),
        String(reconcile.fanOutMs),
        `${reconcile.speedUp}×`,
        String(reconcile.sameSummary),
      ],
    ],
  );
  const summary = { at, machine: machineFacts(), containers: CONTAINERS, bound, audit, reconcile };
  writeResults(
    'fan-out',
    summary,
    `${table}\n\n${CONTAINERS} worker threads as Lambda containers; ${bound}.`,
    fullRun,
  );
} catch (error) {
  exitCode = 1;
  note(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  await admin.disconnect().catch(() => {});
  dynamodb.destroy();
  if (bundleFile) removeBundle(bundleFile);
  if (!(await stop())) exitCode = 1;
}
process.exit(exitCode);
