// Reconcile benchmark: wall time and admin calls of one reconcile run (the task handler, invoked
// in-process as Lambda would) for 10, 100 and 1,000 consumer groups of 10 partitions each, on a
// local Kafka 3.9.1 broker and dynalite. It prints figures and never fails on a number; it exits
// non-zero only when a run failed or the stack could not be stopped.
//
//   node --import tsx bench/reconcile.ts                 all sizes (about 3 min with the stack)
//   node --import tsx bench/reconcile.ts --sizes 10,100  chosen sizes only (no results file)
//
// Under `node --cpu-prof` the handler bundle is kept for bench/cpuprofile-summary.ts.
//
// Per size: a fresh topic of 10 partitions with 3 records in each, N Empty consumer groups with
// committed offsets (kafkajs admin.setOffsets, no consumers left running) and fresh tables, so the
// first run starts from empty history (cold) and the second reads what the first wrote (warm).
// The groups of a size are deleted before the next size, so each run sees only its own groups.
//
// With KAFKA_BROKERS and DYNAMODB_ENDPOINT set, the running services are reused; otherwise a Kafka
// 3.9.1 broker and dynalite are started and stopped here.
import { subscribe } from 'node:diagnostics_channel';
import type { ClientRequest } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { Kafka, logLevel } from 'kafkajs';
import type { ReconcileReport } from '../functions/core/reconcile/reconciler.js';
import type { ReconcileRuntime } from '../functions/reconciling/runtime.js';
import { createLocalTables, localDynamoDbClient } from '../infra/local/local-tables.js';
import { startLocalStack } from '../infra/local/stack.js';
import { lambdaContext } from '../test/helpers/http-event.js';
import {
  alive,
  bundle,
  javaProcesses,
  logStdoutToFile,
  note,
  parseSizes,
  pool,
  removeBundle,
  type Spread,
  shown,
  smokeOr,
  spread,
  unionMs,
  writeResults,
} from './harness.js';

// BENCH_SMOKE=1: one size of 3 groups, one warm run.
const DEFAULT_SIZES = smokeOr<readonly number[]>([10, 100, 1000], [3]);
const PARTITIONS = 10;
const RECORDS_PER_PARTITION = 3;
const COMMITTED_OFFSET = 2; // every partition is one record behind its log end
// admin.setOffsets runs a throwaway consumer per group (join, seek, one fetch of up to kafkajs's
// 5 s maxWaitTime, leave): seconds each, so many run at once.
const SETUP_CONCURRENCY = 100;
const WARM_RUNS = smokeOr(2, 1);

const sizes = parseSizes(process.argv.slice(2), DEFAULT_SIZES);
const profiling = process.execArgv.some((arg) => arg.startsWith('--cpu-prof'));
// Only complete, unprofiled runs are kept in bench/results.
const fullRun = sizes.join(',') === DEFAULT_SIZES.join(',') && !profiling;
const wallStart = performance.now();
const startedAt = new Date();
const runId = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
const round1 = (n: number) => Math.round(n * 10) / 10;

// ---------------------------------------------------------------------------------------------
// DynamoDB requests, seen through node:http's diagnostics channels (the bundled AWS SDK uses
// node:http; kafkajs uses raw sockets and is not seen). Counted only while `counting` is set.

interface DynamoTally {
  calls: number;
  writes: number;
  httpMs: number;
  byOperation: Record<string, { calls: number; httpMs: number }>;
}

const WRITE_OPERATIONS = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);
const pendingHttp = new Map<ClientRequest, { operation: string; start: number }>();
let counting: DynamoTally | undefined;
subscribe('http.client.request.start', (message) => {
  if (!counting) return;
  const { request } = message as { request: ClientRequest };
  const target = String(request.getHeader('x-amz-target') ?? 'http');
  pendingHttp.set(request, {
    operation: target.replace(/^DynamoDB_\d+\./, ''),
    start: performance.now(),
  });
});
subscribe('http.client.response.finish', (message) => {
  const { request } = message as { request: ClientRequest };
  const started = pendingHttp.get(request);
  if (started === undefined || !counting) return;
  pendingHttp.delete(request);
  const ms = performance.now() - started.start;
  counting.calls++;
  counting.httpMs += ms;
  if (WRITE_OPERATIONS.has(started.operation)) counting.writes++;
  const entry = counting.byOperation[started.operation] ?? { calls: 0, httpMs: 0 };
  counting.byOperation[started.operation] = entry;
  entry.calls++;
  entry.httpMs += ms;
});

// ---------------------------------------------------------------------------------------------
// The task handler as Lambda runs it: one esbuild bundle (ESM, kafkajs, middy and the AWS SDK
// inside). The sources cannot be imported by Node directly: group-reader.ts imports
// `AssignerProtocol`, a CommonJS export of kafkajs Node's ESM loader does not detect. Each size
// imports the bundle under its own URL, so the module-level configuration (tables from the
// environment) and the runtime are fresh, as in a new Lambda container.

type TaskHandler = (event: unknown, context: Context) => Promise<unknown>;
interface BundledReconcile {
  readonly handler: TaskHandler;
  readonly reconcileRuntime: () => Promise<ReconcileRuntime>;
}

const bundleReconcile = () =>
  bundle(
    {
      contents: [
        "export { handler } from './functions/reconcile/task-handler.js';",
        "export { reconcileRuntime } from './functions/reconciling/runtime.js';",
      ].join('\n'),
    },
    'reconcile',
  );

// ---------------------------------------------------------------------------------------------
// Results

interface RunFigures {
  readonly wallMs: number;
  readonly adminCalls: number;
  readonly groupsReported: number;
  readonly benchGroupsReported: number;
  readonly partitionsEvaluated: number;
  readonly complete: boolean;
  readonly unreadable: number;
  readonly historyConflicts: number;
  readonly mappingsWritten: number;
  readonly statuses: Record<string, number>;
  /** EMF metric lines the handler wrote to stdout (dropped here). */
  readonly emfMetricLines: number;
  readonly emfMetricBytes: number;
  /** Time inside the runtime's ports, and outside them (see PhaseTimes). */
  readonly phasesMs: PhaseTimes;
  readonly dynamodb: {
    readonly calls: number;
    readonly writes: number;
    readonly httpMs: number;
    readonly byOperation: Record<string, { calls: number; httpMs: number }>;
  };
}

const PORTS = ['kafkaRead', 'historyLoad', 'historySave', 'reportSave'] as const;
type Port = (typeof PORTS)[number];
type Phases = Record<Port, number>;

/**
 * Where a run's time went. Port calls overlap (history saves run 16 at a time, beside the report
 * saves), so their durations added up may exceed the run's wall time: they are reported as
 * such, beside the wall time each port and all of them together had a call in flight, and what
 * overlapped. Nothing here is a difference that can go below zero.
 */
interface PhaseTimes {
  /** Per port, its calls' durations added up (overlapping calls each counted). */
  readonly callsMs: Phases;
  /** Per port, the wall time at least one of its calls was in flight. */
  readonly wallMs: Phases;
  /** The wall time any port call was in flight (the union of every call's span). */
  readonly inPortsMs: number;
  /** The run's wall time with no port call in flight: mapping repair, evaluation, EMF metrics. */
  readonly outsidePortsMs: number;
  /** Every call's duration added up, less inPortsMs: the time calls overlapped (0: none did). */
  readonly overlapMs: number;
}

type Spans = Record<Port, Array<readonly [number, number]>>;
const noSpans = (): Spans => ({ kafkaRead: [], historyLoad: [], historySave: [], reportSave: [] });

/** Times the runtime's ports: the reconciler calls them through these objects at call time. */
function instrument(runtime: ReconcileRuntime): { reset(): Spans } {
  let spans = noSpans();
  const timed = <A extends unknown[], R>(phase: Port, fn: (...args: A) => Promise<R>) => {
    return async (...args: A): Promise<R> => {
      const start = performance.now();
      try {
        return await fn(...args);
      } finally {
        spans[phase].push([start, performance.now()]);
      }
    };
  };
  const { source, history, reports } = runtime;
  source.read = timed('kafkaRead', source.read.bind(source));
  history.loadAll = timed('historyLoad', history.loadAll.bind(history));
  history.save = timed('historySave', history.save.bind(history));
  reports.saveGroupReport = timed('reportSave', reports.saveGroupReport.bind(reports));
  reports.saveGroupReports = timed('reportSave', reports.saveGroupReports.bind(reports));
  return {
    reset() {
      const was = spans;
      spans = noSpans();
      return was;
    },
  };
}

function phaseTimes(spans: Spans, wallMs: number): PhaseTimes {
  const per = (f: (list: Spans[Port]) => number) =>
    Object.fromEntries(PORTS.map((port) => [port, round1(f(spans[port]))])) as Phases;
  const summed = (list: Spans[Port]) => list.reduce((sum, [from, to]) => sum + (to - from), 0);
  const all = PORTS.flatMap((port) => spans[port]);
  const inPorts = unionMs(all);
  return {
    callsMs: per(summed),
    wallMs: per(unionMs),
    inPortsMs: round1(inPorts),
    outsidePortsMs: round1(Math.max(0, wallMs - inPorts)),
    overlapMs: round1(summed(all) - inPorts),
  };
}

interface SizeResult {
  readonly groups: number;
  readonly partitionsPerGroup: number;
  readonly expectedAdminCalls: number;
  readonly cold: RunFigures;
  readonly warm: RunFigures;
  readonly warmWallMs: Spread;
  readonly setupMs: { readonly groups: number; readonly tables: number; readonly runtime: number };
  readonly notes: readonly string[];
}

function figures(
  report: ReconcileReport,
  wallMs: number,
  tally: DynamoTally,
  spans: Spans,
  emf: { readonly lines: number; readonly bytes: number },
  groupPrefix: string,
): RunFigures {
  const phasesMs = phaseTimes(spans, wallMs);
  const statuses: Record<string, number> = {};
  for (const group of report.groups) {
    for (const p of group.partitions) statuses[p.status] = (statuses[p.status] ?? 0) + 1;
  }
  return {
    wallMs: round1(wallMs),
    adminCalls: report.adminCalls,
    groupsReported: report.groups.length,
    benchGroupsReported: report.groups.filter((g) => g.group.startsWith(groupPrefix)).length,
    partitionsEvaluated: report.groups.reduce((sum, g) => sum + g.partitionCount, 0),
    complete: report.complete,
    unreadable: report.unreadable.length,
    historyConflicts: report.historyConflicts,
    mappingsWritten: report.mappings.written + report.mappings.changed,
    statuses,
    emfMetricLines: emf.lines,
    emfMetricBytes: emf.bytes,
    phasesMs,
    dynamodb: {
      calls: tally.calls,
      writes: tally.writes,
      httpMs: round1(tally.httpMs),
      byOperation: Object.fromEntries(
        Object.entries(tally.byOperation)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([operation, t]) => [operation, { calls: t.calls, httpMs: round1(t.httpMs) }]),
      ),
    },
  };
}

function markdown(runs: readonly SizeResult[]): string {
  const lines = [
    `| groups × partitions | first run ms | warm runs ms (${WARM_RUNS}) | admin calls per run (expected) | DynamoDB writes first / warm | DynamoDB HTTP ms first / warm |`,
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of runs) {
    lines.push(
      `| ${r.groups} × ${r.partitionsPerGroup} | ${Math.round(r.cold.wallMs)} | ${shown(r.warmWallMs)} | ${r.cold.adminCalls} / ${r.warm.adminCalls} (${r.expectedAdminCalls}) | ${r.cold.dynamodb.writes} / ${r.warm.dynamodb.writes} | ${Math.round(r.cold.dynamodb.httpMs)} / ${Math.round(r.warm.dynamodb.httpMs)} |`,
    );
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Setup, runs, output

// The handler's log lines (its EMF metric lines are counted and dropped per run) go to a file.
logStdoutToFile('reconcile');
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const reusing = Boolean(process.env.KAFKA_BROKERS?.trim() && process.env.DYNAMODB_ENDPOINT?.trim());
const javaBefore = javaProcesses();
const stack = await startLocalStack({
  log: (line) => note(`stack: ${line}`),
  tablePrefix: `bench-reconcile-${runId}-`,
});
const stackReadyMs = performance.now() - wallStart;
const ourPids = new Set(stack.processes.map((managed) => String(managed.pid)));
const otherJava = javaBefore.filter((line) => !ourPids.has(line.split(' ')[0] ?? ''));
const loadAtStart = loadavg()[0] ?? NaN;
if (otherJava.length > 0) {
  note(`${otherJava.length} java process(es) not started by this run: figures will be noisy`);
}

let exitCode = 0;
const cleanups: Array<() => Promise<void>> = [];
let bundleFile: string | undefined;

async function finish(): Promise<void> {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  // Under --cpu-prof the bundle is kept: bench/cpuprofile-summary.ts maps its lines to modules.
  if (bundleFile && profiling) note(`bundle kept for the profile: ${bundleFile}`);
  else if (bundleFile) removeBundle(bundleFile);
  if (reusing) return;
  await stack.stop();
  const ours = stack.processes.filter((managed) => alive(managed.pid));
  const java = javaProcesses();
  if (ours.length > 0) {
    exitCode = 1;
    note(`still running after stop: ${ours.map((m) => `${m.name} (pid ${m.pid})`).join(', ')}`);
  } else if (java.length === 0) {
    note('stack stopped; no java process left');
  } else {
    note(`stack stopped; java processes this run did not start:\n${java.join('\n')}`);
  }
}

try {
  Object.assign(process.env, {
    KAFKA_BROKERS: stack.kafkaBrokers,
    DYNAMODB_ENDPOINT: stack.dynamodbEndpoint,
    AWS_REGION: 'us-east-1',
    LOG_LEVEL: 'error',
  });
  const kafka = new Kafka({
    clientId: 'tally-bench-reconcile',
    brokers: stack.kafkaBrokers.split(','),
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  cleanups.push(() => producer.disconnect());
  const dynamodb = localDynamoDbClient(stack.dynamodbEndpoint);
  cleanups.push(async () => dynamodb.destroy());

  bundleFile = await bundleReconcile();
  const bundleUrl = pathToFileURL(bundleFile).href;

  const runs: SizeResult[] = [];
  for (const n of sizes) {
    const notes: string[] = [];
    const topic = `bench-reconcile-${runId}-n${n}`;
    const groupPrefix = `bench-reconcile-${runId}-n${n}-g`;
    const groupIds = Array.from(
      { length: n },
      (_, i) => `${groupPrefix}${String(i).padStart(String(n - 1).length, '0')}`,
    );

    // Topic, records, groups with committed offsets (Empty: no member, so no mappings either).
    let started = performance.now();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: PARTITIONS }],
    });
    await producer.send({
      topic,
      acks: -1,
      messages: Array.from({ length: PARTITIONS * RECORDS_PER_PARTITION }, (_, i) => ({
        partition: i % PARTITIONS,
        value: `record-${i}`,
      })),
    });
    const partitions = Array.from({ length: PARTITIONS }, (_, partition) => ({
      partition,
      offset: String(COMMITTED_OFFSET),
    }));
    await pool(groupIds, SETUP_CONCURRENCY, (groupId) =>
      admin.setOffsets({ groupId, topic, partitions }),
    );
    const groupsMs = performance.now() - started;
    note(`n=${n}: topic, records and ${n} groups ready in ${Math.round(groupsMs)} ms`);

    // Fresh tables, and a fresh runtime reading them (connections made before timing).
    started = performance.now();
    const tables = await createLocalTables(dynamodb, `bench-reconcile-${runId}-n${n}-`);
    const tablesMs = performance.now() - started;
    Object.assign(process.env, {
      TALLY_MAPPINGS_TABLE: tables.MappingsTable,
      TALLY_OFFSET_HISTORY_TABLE: tables.OffsetHistoryTable,
      TALLY_RECONCILE_REPORTS_TABLE: tables.ReconcileReportsTable,
    });
    started = performance.now();
    const bundled = (await import(`${bundleUrl}?n=${n}`)) as BundledReconcile;
    const runtime = await bundled.reconcileRuntime();
    await runtime.source.clusterId(); // connects the admin client the runs use
    const runtimeMs = performance.now() - started;
    const phases = instrument(runtime);
    // The handler returns a bounded summary (task-handler.ts); the figures need the whole report,
    // taken from the reconciler the handler calls.
    let lastReport: ReconcileReport | undefined;
    const reconcileRun = runtime.reconciler.run.bind(runtime.reconciler);
    runtime.reconciler.run = async () => {
      lastReport = await reconcileRun();
      return lastReport;
    };

    const runOnce = async (which: 'cold' | 'warm'): Promise<RunFigures> => {
      const tally: DynamoTally = { calls: 0, writes: 0, httpMs: 0, byOperation: {} };
      counting = tally;
      phases.reset();
      const emf = { lines: 0, bytes: 0 };
      const write = process.stdout.write;
      // The handler's EMF metric lines (Powertools writes them to stdout, which CloudWatch reads
      // in Lambda) are produced as usual but counted and dropped: stdout carries our JSON only.
      process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        emf.bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
        emf.lines += String(chunk).split('\n').length - 1;
        const done = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
        if (done) process.nextTick(done);
        return true;
      }) as typeof process.stdout.write;
      const start = performance.now();
      let report: ReconcileReport;
      try {
        lastReport = undefined;
        await bundled.handler({}, lambdaContext(900_000));
        if (lastReport === undefined) throw new Error('the handler did not run the reconciler');
        report = lastReport;
      } finally {
        counting = undefined;
        process.stdout.write = write;
      }
      const wallMs = performance.now() - start;
      const result = figures(report, wallMs, tally, phases.reset(), emf, groupPrefix);
      note(
        `n=${n} ${which}: ${Math.round(wallMs)} ms, ${result.adminCalls} admin calls, ${result.groupsReported} groups, ${result.partitionsEvaluated} partitions, ${tally.writes} DynamoDB writes; ms in ports ${result.phasesMs.inPortsMs} (calls ${JSON.stringify(result.phasesMs.callsMs)}, overlapping ${result.phasesMs.overlapMs}), outside ${result.phasesMs.outsidePortsMs}`,
      );
      if (result.groupsReported !== n || result.benchGroupsReported !== n) {
        notes.push(
          `${which}: ${result.groupsReported} groups reported (${result.benchGroupsReported} of this size), expected ${n}`,
        );
      }
      if (result.partitionsEvaluated !== n * PARTITIONS) {
        notes.push(
          `${which}: ${result.partitionsEvaluated} partitions evaluated, expected ${n * PARTITIONS}`,
        );
      }
      const wrongCommit = report.groups.reduce(
        (sum, g) => sum + g.partitions.filter((p) => p.committed !== COMMITTED_OFFSET).length,
        0,
      );
      if (wrongCommit > 0) {
        notes.push(`${which}: ${wrongCommit} partitions without commit ${COMMITTED_OFFSET}`);
      }
      if (!report.complete) notes.push(`${which}: incomplete: ${report.unreadable.slice(0, 3)}`);
      return result;
    };

    const cold = await runOnce('cold');
    const warm = await runOnce('warm');
    // Further warm runs: the figures are the median (min–max) of the warm runs.
    const warmRuns = [warm];
    for (let r = 1; r < WARM_RUNS; r++) warmRuns.push(await runOnce('warm'));
    await runtime.source.close();

    // One ListGroups, one Metadata, one DescribeGroups per 50 groups, one OffsetFetch per group, one ListOffsets
    // per topic (group-reader.ts).
    const expectedAdminCalls = 2 + Math.ceil(n / 50) + n + 1;
    for (const [which, run] of [
      ['cold', cold],
      ['warm', warm],
    ] as const) {
      if (run.adminCalls !== expectedAdminCalls) {
        notes.push(`${which}: ${run.adminCalls} admin calls, expected ${expectedAdminCalls}`);
      }
    }
    runs.push({
      groups: n,
      partitionsPerGroup: PARTITIONS,
      expectedAdminCalls,
      cold,
      warm,
      warmWallMs: spread(warmRuns.map((w) => w.wallMs)),
      setupMs: { groups: round1(groupsMs), tables: round1(tablesMs), runtime: round1(runtimeMs) },
      notes,
    });

    // The next size must see only its own groups. (Topics are kept: deleting one leaves it in
    // the kafkajs clients' metadata targets, and their next metadata refresh fails.)
    await admin.deleteGroups(groupIds);
  }

  const result = {
    benchmark: 'kafka-tally reconcile',
    machine: {
      cores: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      node: process.version,
      kafka: '3.9.1',
      date: startedAt.toISOString(),
      loadAverage1m: { start: round1(loadAtStart), end: round1(loadavg()[0] ?? NaN) },
      otherJavaProcessesAtStart: otherJava.length,
      kafkaBroker: reusing ? `reused ${stack.kafkaBrokers}` : 'single-node KRaft, started here',
      dynamodb: reusing ? `reused ${stack.dynamodbEndpoint}` : 'dynalite 4.0.0, started here',
    },
    setup: {
      handler: 'functions/reconcile/task-handler.ts from an esbuild bundle, in-process',
      groups: `Empty groups (no members) with offset ${COMMITTED_OFFSET} committed on each of ${PARTITIONS} partitions of one topic holding ${RECORDS_PER_PARTITION} records per partition`,
      cold: 'first run on empty tables (admin client already connected)',
      warm: 'second run, reading the history the first wrote',
      dynamodb:
        'requests seen on node:http during the run; writes = PutItem/UpdateItem/DeleteItem/BatchWriteItem requests (a BatchWriteItem puts up to 25 items)',
    },
    runs,
    timingsMs: {
      stackReady: Math.round(stackReadyMs),
      total: Math.round(performance.now() - wallStart),
    },
  };

  writeResults('reconcile', { ...result, at: startedAt.toISOString() }, markdown(runs), fullRun);
  for (const r of runs) for (const line of r.notes) note(`n=${r.groups}: ${line}`);
} catch (error) {
  exitCode = 1;
  note(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  await finish();
}
note(`total wall time ${Math.round((performance.now() - wallStart) / 1000)} s`);
process.exit(exitCode);
