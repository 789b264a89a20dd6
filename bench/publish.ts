// Publish benchmark: Tally's publish handlers (invoked in-process, as Lambda would) against a raw
// kafkajs idempotent producer on the same broker, in the same run. It prints figures and never
// fails on a number; it exits non-zero only when requests failed (their timings mean nothing).
//
//   node --import tsx bench/publish.ts                  everything (about 50 s with the stack)
//   node --import tsx bench/publish.ts --only single    single-record latency only
//   node --import tsx bench/publish.ts --only batch     batch throughput only
//   node --import tsx bench/publish.ts --only limits    a batch at the request limits only
//
// Batch options, for comparing changes on a busy machine (more pairs, fewer sides):
//   --batch-repeats N                      measured batches per side and size (default 5)
//   --batch-sides handler,rawKafkajs       the sides to run, of handler, httpApi, rawKafkajs, kcat
//
// Under `node --cpu-prof --cpu-prof-dir=<dir>` it also writes <dir>/bench-windows-<pid>.json: when
// each mode's measured requests ran, for bench/cpuprofile-summary.ts --windows.
//
// With KAFKA_BROKERS and DYNAMODB_ENDPOINT set, the running services are reused (fresh tables and
// topics either way); otherwise a Kafka 3.9.1 broker and dynalite are started and stopped here.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { subscribe } from 'node:diagnostics_channel';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { ClientRequest } from 'node:http';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { Kafka, logLevel, type Message, type Producer } from 'kafkajs';
import { TXN_RETRY } from '../functions/adapters/kafka/transactional-producer.js';
import { type LocalStack, startLocalStack } from '../infra/local/stack.js';
import { httpEvent, lambdaContext, testAuthEnv } from '../test/helpers/http-event.js';
import {
  alive,
  bundle,
  javaProcesses,
  logStdoutToFile,
  note,
  removeBundle,
  type Spread,
  shown,
  smokeOr,
  spread,
  writeResults,
} from './harness.js';
import { type LimitsFigures, limits } from './publish-limits.js';

type Mode = 'all' | 'single' | 'batch' | 'limits';
type Response = { statusCode?: number; body?: string };
type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<unknown>;

// BENCH_SMOKE=1: the same modes and sides at a few requests and records each (harness.ts).
const WARMUP = smokeOr(50, 2);
const REQUESTS = smokeOr(500, 10);
const ROUND = smokeOr(100, 5); // single-record modes alternate in rounds of this many sequential requests
const BATCH_RECORDS = smokeOr(1000, 20);
const BATCH_REPEATS = smokeOr(5, 1);
const VALUE_SIZES = [100, 1024] as const;
const SINGLE_VALUE_BYTES = 100;
const PARTITIONS = 3;
const LIMITS_REPEATS = smokeOr(5, 1);
// TALLY_MAX_REQUEST_BYTES's default (the smoke run fills a tenth of it).
const MAX_REQUEST_BYTES = smokeOr(6_000_000, 600_000);

const BATCH_SIDES = [
  'handler',
  'httpApi',
  'rawKafkajs',
  'rawWithHeaders',
  'kcat',
  'handlerTransactional',
  'rawTransactional',
] as const;
type BatchSide = (typeof BATCH_SIDES)[number];

function optionOf(argv: readonly string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at === -1 ? undefined : String(argv[at + 1]);
}

function parseBatchRepeats(argv: readonly string[]): number {
  const given = optionOf(argv, '--batch-repeats');
  const repeats = Number(given ?? BATCH_REPEATS);
  if (!Number.isSafeInteger(repeats) || repeats < 1) {
    throw new Error(`--batch-repeats: a positive integer, got ${given}`);
  }
  return repeats;
}

function parseBatchSides(argv: readonly string[]): ReadonlySet<BatchSide> {
  const given = optionOf(argv, '--batch-sides')?.split(',') ?? [...BATCH_SIDES];
  const unknown = given.filter((side) => !(BATCH_SIDES as readonly string[]).includes(side));
  if (unknown.length > 0 || given.length === 0) {
    throw new Error(`--batch-sides: some of ${BATCH_SIDES.join(', ')}; not ${unknown.join(', ')}`);
  }
  return new Set(given as BatchSide[]);
}

function parseMode(argv: readonly string[]): Mode {
  const at = argv.indexOf('--only');
  if (at === -1) return 'all';
  const value = argv[at + 1];
  if (value === 'single' || value === 'batch' || value === 'limits') return value;
  throw new Error(`--only: single, batch or limits, got ${String(value)}`);
}

const mode = parseMode(process.argv.slice(2));
const batchRepeats = parseBatchRepeats(process.argv.slice(2));
const batchSides = parseBatchSides(process.argv.slice(2));
const wallStart = performance.now();
const runId = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
const round3 = (n: number) => Math.round(n * 1000) / 1000;

// ---------------------------------------------------------------------------------------------
// Statistics

interface Latency {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly min: number;
  readonly max: number;
  readonly mean: number;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
}

function latency(samples: readonly number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: round3(percentile(sorted, 0.5)),
    p99: round3(percentile(sorted, 0.99)),
    min: round3(sorted[0] ?? NaN),
    max: round3(sorted[sorted.length - 1] ?? NaN),
    mean: round3(sorted.reduce((sum, v) => sum + v, 0) / sorted.length),
  };
}

// ---------------------------------------------------------------------------------------------
// Where a request's time goes, measured outside the code under test: DynamoDB HTTP round trips
// (seen through node:http's diagnostics channels; kafkajs uses raw sockets and is not seen) and
// CPU time of this process and of the stack's processes (from /proc, when this run started them).

interface DynamoCall {
  readonly operation: string;
  readonly ms: number;
}

const pendingHttp = new Map<ClientRequest, { operation: string; start: number }>();
let dynamoCalls: DynamoCall[] = [];
subscribe('http.client.request.start', (message) => {
  const { request } = message as { request: ClientRequest };
  const target = String(request.getHeader('x-amz-target') ?? 'http');
  const operation = target.replace(/^DynamoDB_\d+\./, '');
  pendingHttp.set(request, { operation, start: performance.now() });
});
subscribe('http.client.response.finish', (message) => {
  const { request } = message as { request: ClientRequest };
  const started = pendingHttp.get(request);
  if (started === undefined) return;
  pendingHttp.delete(request);
  dynamoCalls.push({ operation: started.operation, ms: performance.now() - started.start });
});

const CLOCK_TICK_MS = 10; // USER_HZ is 100 on Linux

function childCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS; // utime + stime
  } catch {
    return undefined;
  }
}

interface CpuSnapshot {
  readonly self: number;
  readonly children: Record<string, number | undefined>;
}

function cpuSnapshot(stack: LocalStack): CpuSnapshot {
  const usage = process.cpuUsage();
  const children: Record<string, number | undefined> = {};
  for (const managed of stack.processes) {
    const name = managed.name.startsWith('kafka')
      ? 'kafkaBroker'
      : managed.name.includes('dynalite')
        ? 'dynalite'
        : managed.name;
    children[name] = childCpuMs(managed.pid);
  }
  return { self: (usage.user + usage.system) / 1000, children };
}

/** Per-mode accumulation of CPU and DynamoDB time over the rounds that mode ran. */
class Account {
  selfCpuMs = 0;
  childCpuMs: Record<string, number> = {};
  calls: DynamoCall[] = [];
  requests = 0;

  add(before: CpuSnapshot, after: CpuSnapshot, calls: readonly DynamoCall[], requests: number) {
    this.selfCpuMs += after.self - before.self;
    for (const [name, value] of Object.entries(after.children)) {
      const was = before.children[name];
      if (value === undefined || was === undefined) continue;
      this.childCpuMs[name] = (this.childCpuMs[name] ?? 0) + value - was;
    }
    this.calls.push(...calls);
    this.requests += requests;
  }

  summary() {
    const per = (total: number) => round3(total / this.requests);
    const byOperation: Record<string, { perRequest: number; p50Ms: number; meanMs: number }> = {};
    for (const operation of [...new Set(this.calls.map((c) => c.operation))].sort()) {
      const times = this.calls.filter((c) => c.operation === operation).map((c) => c.ms);
      const stats = latency(times);
      byOperation[operation] = {
        perRequest: per(times.length),
        p50Ms: stats.p50,
        meanMs: stats.mean,
      };
    }
    return {
      cpuMsPerRequest: {
        benchProcess: per(this.selfCpuMs),
        ...Object.fromEntries(
          Object.entries(this.childCpuMs).map(([name, total]) => [name, per(total)]),
        ),
      },
      dynamodb: {
        callsPerRequest: per(this.calls.length),
        httpMsPerRequest: per(this.calls.reduce((sum, c) => sum + c.ms, 0)),
        byOperation,
      },
    };
  }
}

type AccountSummary = ReturnType<Account['summary']>;
type SingleMode =
  | 'handler'
  | 'handlerIdempotencyKey'
  | 'httpApi'
  | 'rawKafkajs'
  | 'floorKeyless'
  | 'floorKeyed'
  | 'handlerTransactional'
  | 'rawTransactional';
type SingleFigures = {
  readonly latencyMs: Latency;
  /** p50 and p99 of each round of ROUND requests: median (min–max) over the rounds. */
  readonly p50PerRound: Spread;
  readonly p99PerRound: Spread;
} & AccountSummary;
type BatchSize = `value${(typeof VALUE_SIZES)[number]}B`;
interface Throughput {
  readonly recordsPerSecond: Spread;
  readonly megabytesPerSecond: Spread;
  readonly batchMs: Spread;
}
interface BatchFigures {
  readonly records: number;
  readonly valueBytes: number;
  readonly payloadBytes: number;
  readonly requestBodyBytes: number;
  readonly handler: Throughput & AccountSummary;
  readonly httpApi: Throughput & AccountSummary;
  readonly rawKafkajs: Throughput & AccountSummary;
  /** The raw producer sending the same records with Tally's three tally.* headers. */
  readonly rawWithHeaders: Throughput & AccountSummary;
  readonly kcat: Throughput & AccountSummary;
  /** The handler with Tally-Transactional: true, and one raw kafkajs transaction of the records. */
  readonly handlerTransactional: Throughput & AccountSummary;
  readonly rawTransactional: Throughput & AccountSummary;
  /** handler batch time / raw batch time of the same repeat = raw throughput / handler's. */
  readonly rawOverHandlerThroughputPerPair: Spread;
  /** The goal's ratio (issue 15: ≥ 0.8): handler throughput / raw's = raw time / handler time. */
  readonly handlerOverRawThroughputPerPair: Spread;
  /** The goals (issue 32): handler ÷ raw-with-headers ≥ 0.8, handler ÷ bare raw ≥ 0.6. */
  readonly handlerOverRawWithHeadersThroughputPerPair: Spread;
  readonly rawWithHeadersOverRawThroughputPerPair: Spread;
  readonly rawOverHttpApiThroughputPerPair: Spread;
  readonly kcatOverRawThroughputPerPair: Spread;
  /** Transactional handler throughput / a raw transaction's, and / the idempotent handler's. */
  readonly handlerTransactionalOverRawTransactionalThroughputPerPair: Spread;
  readonly handlerTransactionalOverHandlerThroughputPerPair: Spread;
}

// ---------------------------------------------------------------------------------------------
// The handlers as Lambda runs them: one esbuild bundle with serverless.yml's options (ESM,
// kafkajs and middy inside; target node20 as that is what runs here). The TypeScript sources
// cannot be imported by Node directly: functions/adapters/kafka/topic-catalog.ts imports
// `ConfigResourceTypes` from kafkajs, a CommonJS export Node's ESM loader does not detect.
// The AWS SDK, bundled in the deployment too (issue 32: tree-shaken, not the runtime's copy), is bundled so the
// bundle can live outside the repository; it is the same pinned code either way.

interface BundledHandlers {
  readonly produce: Handler;
  readonly batch: Handler;
  readonly publishRuntime: typeof import('../functions/publishing/runtime.js').publishRuntime;
}

async function bundleHandlers(): Promise<{ file: string; keep: boolean }> {
  const file = await bundle(
    {
      contents: [
        "export { handler as produce } from './functions/publish/produce-handler.js';",
        "export { handler as batch } from './functions/publish/batch-handler.js';",
        "export { publishRuntime } from './functions/publishing/runtime.js';",
      ].join('\n'),
    },
    'publish',
  );
  // Under --cpu-prof the bundle is kept: bench/cpuprofile-summary.ts maps its lines to modules.
  return { file, keep: profiling };
}

// ---------------------------------------------------------------------------------------------
// Setup

const startedAt = new Date();
// The in-process handlers' EMF metric line per request (and any log line) go to a log file.
logStdoutToFile('publish');
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const reusing = Boolean(process.env.KAFKA_BROKERS?.trim() && process.env.DYNAMODB_ENDPOINT?.trim());
// The local HTTP API (serverless-offline) is bench/run.ts's when it runs us (BENCH_API_URL);
// otherwise this run serves one, with the default local tables its functions use.
const givenApi = process.env.BENCH_API_URL?.trim();
const stack = await startLocalStack({
  log: (line) => note(`stack: ${line}`),
  // `--only limits`, and `--only batch` without the httpApi side, call the handler in-process
  // only: no HTTP API to serve.
  ...(givenApi || mode === 'limits' || (mode === 'batch' && !batchSides.has('httpApi'))
    ? { tablePrefix: `bench-${runId}-` }
    : { api: true }),
});
const apiUrl = givenApi || (stack.apiUrl as string);
const apiToken = process.env.BENCH_API_TOKEN?.trim() || (stack.apiToken as string);
const stackReadyMs = performance.now() - wallStart;
const ourPids = new Set(stack.processes.map((managed) => String(managed.pid)));
const otherJavaAtStart = javaProcesses().filter((line) => !ourPids.has(line.split(' ')[0] ?? ''));
const loadAtStart = loadavg()[0] ?? NaN;
if (otherJavaAtStart.length > 0) {
  note(
    `${otherJavaAtStart.length} java process(es) not started by this run: figures will be noisy`,
  );
}

let exitCode = 0;
let adminKafka: Kafka | undefined;
const cleanups: Array<() => Promise<void>> = [];

// When each mode's measured requests ran, on the clock of V8's CPU profiles (written only when
// this process is profiled: see bench/cpuprofile-summary.ts).
const windows: Record<string, Array<[number, number]>> = {};
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
function markWindow(name: string, from: number): void {
  const list = windows[name] ?? [];
  windows[name] = list;
  list.push([from, nowUs()]);
}

const profiling = process.execArgv.some((arg) => arg.startsWith('--cpu-prof'));

function writeProfileWindows(): void {
  if (!profiling) return;
  const dirArg = process.execArgv.find((arg) => arg.startsWith('--cpu-prof-dir='));
  const dir = dirArg ? dirArg.slice('--cpu-prof-dir='.length) : process.cwd();
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `bench-windows-${process.pid}.json`);
  writeFileSync(file, `${JSON.stringify(windows)}\n`);
  note(`profile windows: ${file}`);
}

async function finish(): Promise<void> {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
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
    TALLY_STREAMS_TABLE: stack.tables.StreamsTable,
    TALLY_LEDGER_TABLE: stack.tables.LedgerTable,
    TALLY_RESERVATIONS_TABLE: stack.tables.ReservationsTable,
    // Transactional publish (Tally-Transactional: true): the transactional ids' lease pool.
    TALLY_TXN_IDS_TABLE: stack.tables.TxnIdsTable,
    TALLY_TXN_ID_PREFIX: `bench-${runId}-`,
    AWS_REGION: 'us-east-1',
    LOG_LEVEL: 'error',
    TALLY_MAX_BATCH_ENTRIES: String(BATCH_RECORDS),
    // The in-process handler's requests carry the test token (httpEvent).
    ...testAuthEnv(),
  });

  adminKafka = new Kafka({
    clientId: 'tally-bench',
    brokers: stack.kafkaBrokers.split(','),
    logLevel: logLevel.NOTHING,
  });
  const admin = adminKafka.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  const topic = async (purpose: string) => {
    const name = `bench-${purpose}-${runId}`;
    try {
      await admin.createTopics({
        waitForLeaders: true,
        topics: [{ topic: name, numPartitions: PARTITIONS }],
      });
    } catch (error) {
      // On a loaded machine kafkajs's wait for leaders can give up (UNKNOWN_TOPIC_OR_PARTITION)
      // while the topic is still being created: wait for its leaders here, up to 60 s.
      if (!(error as { retriable?: boolean }).retriable) throw error;
      await leadersOf(name, error);
    }
    return name;
  };
  const leadersOf = async (name: string, cause: unknown) => {
    for (const until = Date.now() + 60_000; Date.now() < until; ) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const found = await admin.fetchTopicMetadata({ topics: [name] }).catch(() => undefined);
      const partitions = found?.topics[0]?.partitions ?? [];
      if (partitions.length === PARTITIONS && partitions.every((p) => p.leader >= 0)) return;
    }
    throw cause;
  };

  // Configuration is read when the modules load, as in Lambda: environment first.
  const bundle = await bundleHandlers();
  const handlers = (await import(pathToFileURL(bundle.file).href)) as BundledHandlers;
  const produceHandler = handlers.produce;
  const batchHandler = handlers.batch;
  cleanups.push(async () => (await handlers.publishRuntime()).sender.close());
  cleanups.push(async () => {
    if (bundle.keep) note(`handler bundle kept for the profile: ${bundle.file}`);
    else removeBundle(bundle.file);
  });

  const rawProducer: Producer = adminKafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await rawProducer.connect();
  cleanups.push(() => rawProducer.disconnect());
  // Its transactional floor: one transaction per request (send, commit), with the settings of
  // Tally's transactional producer (adapters/kafka/transactional-producer.ts: its retry, so that
  // CONCURRENT_TRANSACTIONS after a commit waits 10 ms, not kafkajs's 300).
  const rawTxnProducer: Producer = adminKafka.producer({
    transactionalId: `bench-raw-${runId}`,
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    transactionTimeout: 60_000,
    retry: TXN_RETRY,
  });
  await rawTxnProducer.connect();
  cleanups.push(() => rawTxnProducer.disconnect());
  const inTransaction = async (send: { topic: string; messages: Message[] }) => {
    const transaction = await rawTxnProducer.transaction();
    try {
      await transaction.send({ ...send, acks: -1 });
    } catch (error) {
      await transaction.abort().catch(() => {});
      throw error;
    }
    await transaction.commit();
  };

  const clusterId = stack.kafkaClusterId;
  const value = (bytes: number, i: number) => `${i}:`.padEnd(bytes, 'x');
  const invoke = async (handler: Handler, event: APIGatewayProxyEventV2) =>
    (await handler(event, lambdaContext())) as Response;
  const failures: Record<string, { count: number; first: string[] }> = {};
  const fail = (what: string, detail: string) => {
    const entry = failures[what] ?? { count: 0, first: [] };
    failures[what] = entry;
    entry.count++;
    if (entry.first.length < 3) entry.first.push(detail.slice(0, 300));
    exitCode = 1;
  };

  // -------------------------------------------------------------------------------------------
  // 1, 2. Single-record latency

  const singleModes: SingleMode[] = [
    'handler',
    'handlerIdempotencyKey',
    'httpApi',
    'rawKafkajs',
    'floorKeyless',
    'floorKeyed',
    'handlerTransactional',
    'rawTransactional',
  ];
  /** The local HTTP API (serverless-offline running serverless.yml's function), as a client calls it. */
  const viaApi = async (path: string, body: string) => {
    const response = await fetch(`${apiUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiToken}` },
      body,
    });
    return { statusCode: response.status, body: await response.text() } satisfies Response;
  };

  // The floors: the handler's I/O without Tally, with the same DynamoDB client settings
  // (runtime.ts, client.ts) and the same calls the handler makes on its default fast path (seqs
  // leased, so no counter update per request: core/publish/publisher.ts's plan), done directly.
  //   keyless: send · ledger PutItem (the block's first write, conditional on no block there)
  //   keyed:   reservation PutItem (the key's claim, conditional) · send ·
  //            ledger PutItem ∥ reservation UpdateItem (the answer stored, conditional on the lock)
  const documents = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: 'us-east-1',
      endpoint: stack.dynamodbEndpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 2,
      requestHandler: { connectionTimeout: 3000, requestTimeout: 3000 },
    }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
  cleanups.push(async () => documents.destroy());
  let floorSeq = 0;
  const floorStream = `floor-${runId}`;
  const ledgerPut = (topicName: string, seq: number, outcomes: unknown[], key?: string) =>
    new PutCommand({
      TableName: stack.tables.LedgerTable,
      Item: {
        stream: floorStream,
        seq,
        count: 1,
        lastSeq: seq,
        topic: topicName,
        session: 'raw',
        idempotencyKey: key,
        outcomes: JSON.stringify(outcomes),
        updatedAt: new Date().toISOString(),
        expiresAt: Math.floor(Date.now() / 1000) + 86_400,
        version: randomUUID(),
      },
      ConditionExpression: 'attribute_not_exists(#seq)',
      ExpressionAttributeNames: { '#seq': 'seq' },
    });
  const floorKeyless = async (topicName: string, message: Message) => {
    const seq = ++floorSeq;
    const [meta] = await rawProducer.send({ topic: topicName, acks: -1, messages: [message] });
    await documents.send(ledgerPut(topicName, seq, [['A', meta?.partition, meta?.baseOffset]]));
  };
  const floorKeyed = async (topicName: string, message: Message, idempotencyKey: string) => {
    const seq = ++floorSeq;
    const lockedUntil = Date.now() + 30_000;
    await documents.send(
      new PutCommand({
        TableName: stack.tables.ReservationsTable,
        Item: {
          idempotencyKey,
          fingerprint: 'floor',
          stream: floorStream,
          topic: topicName,
          count: 1,
          timestamp: Date.now(),
          firstSeq: seq,
          lockedUntil,
          createdAt: new Date().toISOString(),
          expiresAt: Math.floor(Date.now() / 1000) + 86_400,
        },
        ConditionExpression: 'attribute_not_exists(idempotencyKey)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    const [meta] = await rawProducer.send({ topic: topicName, acks: -1, messages: [message] });
    const answer = JSON.stringify({
      statusCode: 200,
      body: JSON.stringify({ partition_id: meta?.partition, offset: meta?.baseOffset, seq }),
    });
    await Promise.all([
      documents.send(ledgerPut(topicName, seq, [['A', meta?.partition, meta?.baseOffset]])),
      documents.send(
        new UpdateCommand({
          TableName: stack.tables.ReservationsTable,
          Key: { idempotencyKey },
          UpdateExpression: 'SET lockedUntil = :free, answer = :answer',
          ConditionExpression: 'lockedUntil = :held',
          ExpressionAttributeValues: { ':free': 0, ':held': lockedUntil, ':answer': answer },
        }),
      ),
    ]);
  };

  let ratiosPerRound: Record<string, Spread> = {};

  async function single() {
    const topics = {
      handler: await topic('single-handler'),
      handlerIdempotencyKey: await topic('single-idem'),
      httpApi: await topic('single-http'),
      rawKafkajs: await topic('single-raw'),
      floorKeyless: await topic('single-floor-keyless'),
      floorKeyed: await topic('single-floor-keyed'),
      handlerTransactional: await topic('single-txn'),
      rawTransactional: await topic('single-raw-txn'),
    } satisfies Record<SingleMode, string>;
    let counter = 0;
    /** One request; returns its latency in ms (the event is built outside the timing). */
    const once = async (which: SingleMode): Promise<number> => {
      const i = counter++;
      const key = `k-${i}`;
      const text = value(SINGLE_VALUE_BYTES, i);
      if (which === 'rawKafkajs') {
        const message: Message = { key, value: text };
        const start = performance.now();
        await rawProducer
          .send({ topic: topics.rawKafkajs, acks: -1, messages: [message] })
          .catch((error: unknown) => fail(which, String(error)));
        return performance.now() - start;
      }
      if (which === 'rawTransactional') {
        const message: Message = { key, value: text };
        const start = performance.now();
        await inTransaction({ topic: topics.rawTransactional, messages: [message] }).catch(
          (error: unknown) => fail(which, String(error)),
        );
        return performance.now() - start;
      }
      if (which === 'httpApi') {
        const body = JSON.stringify({
          key: { type: 'STRING', data: key },
          value: { type: 'STRING', data: text },
        });
        const start = performance.now();
        const response = await viaApi(
          `/v3/clusters/${clusterId}/topics/${topics.httpApi}/records`,
          body,
        ).catch((error: unknown) => ({ statusCode: 0, body: String(error) }));
        const ms = performance.now() - start;
        if (response.statusCode !== 200) fail(which, `${response.statusCode}: ${response.body}`);
        return ms;
      }
      if (which === 'floorKeyless' || which === 'floorKeyed') {
        const message: Message = { key, value: text };
        const start = performance.now();
        await (which === 'floorKeyless'
          ? floorKeyless(topics.floorKeyless, message)
          : floorKeyed(topics.floorKeyed, message, `floor-${runId}-${i}`)
        ).catch((error: unknown) => fail(which, String(error)));
        return performance.now() - start;
      }
      const event = httpEvent({
        routeKey: 'POST /v3/clusters/{cluster_id}/topics/{topic_name}/records',
        pathParameters: { cluster_id: clusterId, topic_name: topics[which] },
        headers:
          which === 'handler'
            ? {}
            : which === 'handlerTransactional'
              ? { 'tally-transactional': 'true' }
              : { 'idempotency-key': `bench-${runId}-${i}` },
        body: JSON.stringify({
          key: { type: 'STRING', data: key },
          value: { type: 'STRING', data: text },
        }),
      });
      const start = performance.now();
      const response = await invoke(produceHandler, event);
      const ms = performance.now() - start;
      if (response.statusCode !== 200) fail(which, `${response.statusCode}: ${response.body}`);
      return ms;
    };

    note(`single: warm-up ${WARMUP} per mode (${singleModes.join(', ')})`);
    for (const which of singleModes) for (let i = 0; i < WARMUP; i++) await once(which);

    const samples = Object.fromEntries(singleModes.map((m) => [m, [] as number[]])) as Record<
      SingleMode,
      number[]
    >;
    const rounds = Object.fromEntries(singleModes.map((m) => [m, [] as Latency[]])) as Record<
      SingleMode,
      Latency[]
    >;
    const accounts = Object.fromEntries(singleModes.map((m) => [m, new Account()])) as Record<
      SingleMode,
      Account
    >;
    for (let done = 0; done < REQUESTS; done += ROUND) {
      for (const which of singleModes) {
        dynamoCalls = [];
        const before = cpuSnapshot(stack);
        const from = nowUs();
        const round: number[] = [];
        for (let i = 0; i < ROUND; i++) round.push(await once(which));
        markWindow(`single.${which}`, from);
        accounts[which].add(before, cpuSnapshot(stack), dynamoCalls, ROUND);
        samples[which].push(...round);
        rounds[which].push(latency(round));
      }
    }
    note(`single: ${REQUESTS} requests per mode done`);

    const result: Partial<Record<SingleMode, SingleFigures>> = {};
    for (const which of singleModes) {
      result[which] = {
        latencyMs: latency(samples[which]),
        p50PerRound: spread(rounds[which].map((r) => r.p50)),
        p99PerRound: spread(rounds[which].map((r) => r.p99)),
        ...accounts[which].summary(),
      };
    }
    // Ratios pair by pair: each mode's round against the raw producer's round of the same turn.
    const perRound = (which: SingleMode, q: 'p50' | 'p99', over: SingleMode = 'rawKafkajs') =>
      spread(rounds[which].map((r, i) => r[q] / (rounds[over][i]?.[q] ?? NaN)));
    ratiosPerRound = {
      // The goals (issue 32): each at most 1.15× its floor.
      handlerP50OverFloorKeylessP50: perRound('handler', 'p50', 'floorKeyless'),
      handlerIdempotencyKeyP50OverFloorKeyedP50: perRound(
        'handlerIdempotencyKey',
        'p50',
        'floorKeyed',
      ),
      handlerP50OverRawP50: perRound('handler', 'p50'),
      handlerP99OverRawP99: perRound('handler', 'p99'),
      httpApiP50OverRawP50: perRound('httpApi', 'p50'),
      handlerIdempotencyKeyP50OverRawP50: perRound('handlerIdempotencyKey', 'p50'),
      floorKeylessP50OverRawP50: perRound('floorKeyless', 'p50'),
      floorKeyedP50OverRawP50: perRound('floorKeyed', 'p50'),
      // Transactional mode: against its own floor (a raw transaction per record), and the cost of
      // the mode over the idempotent handler in the same turns.
      handlerTransactionalP50OverRawTransactionalP50: perRound(
        'handlerTransactional',
        'p50',
        'rawTransactional',
      ),
      handlerTransactionalP50OverHandlerP50: perRound('handlerTransactional', 'p50', 'handler'),
      rawTransactionalP50OverRawP50: perRound('rawTransactional', 'p50'),
    };
    return {
      setup: {
        warmupPerMode: WARMUP,
        requestsPerMode: REQUESTS,
        schedule: `sequential, one request at a time; modes alternate in rounds of ${ROUND}`,
        record: `STRING key "k-<n>", STRING value of ${SINGLE_VALUE_BYTES} bytes`,
        handler:
          'produce-handler (v3 produce) from an esbuild bundle built like serverless.yml, invoked in-process with an API Gateway v2 event',
        httpApi:
          'the same route over HTTP on the local API: serverless-offline serving serverless.yml (its own bundle of the handler), fetch from this process',
        rawKafkajs: 'kafkajs 2.2.4 producer, idempotent, maxInFlightRequests 1, acks -1',
        floorKeyless:
          "the keyless handler's I/O done directly: the rawKafkajs send, then the ledger PutItem (conditional), with the handler's DynamoDB client settings",
        floorKeyed:
          "the keyed handler's I/O done directly: the reservation PutItem (conditional claim), the rawKafkajs send, then the ledger PutItem and the reservation UpdateItem (the answer) side by side",
        handlerTransactional:
          'the handler with Tally-Transactional: true (one Kafka transaction per request, its id leased from the pool, the ledger written SENDING and PREPARED around the send)',
        rawTransactional:
          "kafkajs 2.2.4 transactional producer: transaction(), send, commit per request, with the retry of Tally's transactional producer",
        dynamodbNote:
          'httpMsPerRequest: request written to response headers, summed over the calls (node:http diagnostics channels); excludes SDK work in this process',
        cpuNote:
          'cpuMsPerRequest: this process (handler or kafkajs client), and from /proc the stack processes this run started; CLK_TCK granularity 10 ms per round',
      },
      ...result,
    };
  }

  // -------------------------------------------------------------------------------------------
  // 3. Batch throughput

  async function batch() {
    const out: Partial<Record<BatchSize, BatchFigures>> = {};
    for (const bytes of VALUE_SIZES) {
      const handlerTopic = await topic(`batch-${bytes}-handler`);
      const httpTopic = await topic(`batch-${bytes}-http`);
      const rawTopic = await topic(`batch-${bytes}-raw`);
      const rawHeadersTopic = await topic(`batch-${bytes}-raw-headers`);
      const kcatTopic = await topic(`batch-${bytes}-kcat`);
      const handlerTxnTopic = await topic(`batch-${bytes}-handler-txn`);
      const rawTxnTopic = await topic(`batch-${bytes}-raw-txn`);
      const keys = Array.from({ length: BATCH_RECORDS }, (_, i) => `k-${i}`);
      const values = keys.map((_, i) => value(bytes, i));
      const payloadBytes = keys.reduce((sum, k, i) => sum + k.length + (values[i]?.length ?? 0), 0);
      const body = JSON.stringify({
        entries: keys.map((key, i) => ({
          id: `e${i}`,
          key: { type: 'STRING', data: key },
          value: { type: 'STRING', data: values[i] },
        })),
      });
      const messages: Message[] = keys.map((key, i) => ({ key, value: values[i] ?? null }));
      const kcatInput = keys.map((key, i) => `${key}\t${values[i]}\n`).join('');

      /** The batch handler in-process; `transactional`: one Kafka transaction for the batch. */
      const handlerRunOf = (transactional: boolean) => async () => {
        const event = httpEvent({
          routeKey: 'POST /v3/clusters/{cluster_id}/topics/{topic_name}/records:batch',
          pathParameters: {
            cluster_id: clusterId,
            topic_name: transactional ? handlerTxnTopic : handlerTopic,
          },
          headers: transactional ? { 'tally-transactional': 'true' } : {},
          body,
        });
        const start = performance.now();
        const response = await invoke(batchHandler, event);
        const ms = performance.now() - start;
        const failed =
          response.statusCode !== 207
            ? -1
            : (JSON.parse(response.body ?? '{}') as { failures?: unknown[] }).failures?.length;
        const what = `${transactional ? 'txn-' : ''}batch-${bytes}`;
        if (failed !== 0) fail(what, `${response.statusCode}: ${response.body}`);
        return ms;
      };
      const handlerRun = handlerRunOf(false);
      const handlerTxnRun = handlerRunOf(true);
      const rawTxnRun = async () => {
        const start = performance.now();
        await inTransaction({ topic: rawTxnTopic, messages }).catch((error: unknown) =>
          fail(`raw-txn-batch-${bytes}`, String(error)),
        );
        return performance.now() - start;
      };
      const httpRun = async () => {
        const start = performance.now();
        const response = await viaApi(
          `/v3/clusters/${clusterId}/topics/${httpTopic}/records:batch`,
          body,
        ).catch((error: unknown) => ({ statusCode: 0, body: String(error) }));
        const ms = performance.now() - start;
        const failed =
          response.statusCode !== 207
            ? -1
            : (JSON.parse(response.body || '{}') as { failures?: unknown[] }).failures?.length;
        if (failed !== 0) fail(`http-batch-${bytes}`, `${response.statusCode}: ${response.body}`);
        return ms;
      };
      // kcat (librdkafka) as a process: its start-up is in the figure, as it is for a shell user.
      const kcatRun = async () => {
        const start = performance.now();
        try {
          execFileSync(
            'kcat',
            [
              '-P',
              '-b',
              stack.kafkaBrokers,
              '-t',
              kcatTopic,
              '-K',
              '\t',
              '-X',
              'acks=all',
              '-X',
              'enable.idempotence=true',
            ],
            { input: kcatInput, stdio: ['pipe', 'ignore', 'pipe'] },
          );
        } catch (error) {
          fail(`kcat-batch-${bytes}`, String(error));
        }
        return performance.now() - start;
      };
      const rawRun = async () => {
        const start = performance.now();
        await rawProducer
          .send({ topic: rawTopic, acks: -1, messages })
          .catch((error: unknown) => fail(`raw-batch-${bytes}`, String(error)));
        return performance.now() - start;
      };
      // The same records with the headers Tally stamps (tally.stream, tally.seq, tally.session:
      // the stream named after the topic, as the handler's is, fresh seqs every batch, a session
      // id of the handler's length), made before the clock starts.
      const stream = Buffer.from(handlerTopic);
      const session = Buffer.from(`s-${randomUUID().slice(0, 12)}`);
      let seq = 0;
      const withHeaders = (): Message[] =>
        messages.map((message) => ({
          ...message,
          headers: {
            'tally.stream': stream,
            'tally.seq': Buffer.from(String(++seq), 'latin1'),
            'tally.session': session,
          },
        }));
      const rawWithHeadersRun = async () => {
        const stamped = withHeaders();
        const start = performance.now();
        await rawProducer
          .send({ topic: rawHeadersTopic, acks: -1, messages: stamped })
          .catch((error: unknown) => fail(`raw-headers-batch-${bytes}`, String(error)));
        return performance.now() - start;
      };

      const runs = (
        [
          ['handler', handlerRun],
          ['httpApi', httpRun],
          ['rawKafkajs', rawRun],
          ['rawWithHeaders', rawWithHeadersRun],
          ['kcat', kcatRun],
          ['handlerTransactional', handlerTxnRun],
          ['rawTransactional', rawTxnRun],
        ] as const
      ).filter(([which]) => batchSides.has(which));
      // Warm-up, one batch per side: topic metadata, first-batch allocations.
      for (const [, run] of runs) await run();
      const handlerMs: number[] = [];
      const httpMs: number[] = [];
      const rawMs: number[] = [];
      const rawHeadersMs: number[] = [];
      const kcatMs: number[] = [];
      const handlerTxnMs: number[] = [];
      const rawTxnMs: number[] = [];
      const accounts = {
        handler: new Account(),
        httpApi: new Account(),
        rawKafkajs: new Account(),
        rawWithHeaders: new Account(),
        kcat: new Account(),
        handlerTransactional: new Account(),
        rawTransactional: new Account(),
      };
      const times = {
        handler: handlerMs,
        httpApi: httpMs,
        rawKafkajs: rawMs,
        rawWithHeaders: rawHeadersMs,
        kcat: kcatMs,
        handlerTransactional: handlerTxnMs,
        rawTransactional: rawTxnMs,
      };
      for (let r = 0; r < batchRepeats; r++) {
        for (const [which, run] of runs) {
          const into = times[which];
          dynamoCalls = [];
          const before = cpuSnapshot(stack);
          const from = nowUs();
          into.push(await run());
          markWindow(`batch.value${bytes}B.${which}`, from);
          accounts[which].add(before, cpuSnapshot(stack), dynamoCalls, 1);
        }
      }
      const figures = (ms: readonly number[]): Throughput => ({
        recordsPerSecond: spread(ms.map((t) => BATCH_RECORDS / (t / 1000))),
        megabytesPerSecond: spread(ms.map((t) => payloadBytes / 1e6 / (t / 1000))),
        batchMs: spread(ms),
      });
      const pairRatios = handlerMs.map((h, r) => h / (rawMs[r] ?? NaN));
      const goalRatios = handlerMs.map((h, r) => (rawMs[r] ?? NaN) / h);
      const headersGoalRatios = handlerMs.map((h, r) => (rawHeadersMs[r] ?? NaN) / h);
      const headersCostRatios = rawHeadersMs.map((h, r) => (rawMs[r] ?? NaN) / h);
      const httpPairRatios = httpMs.map((h, r) => h / (rawMs[r] ?? NaN));
      const kcatPairRatios = kcatMs.map((kcat, r) => (rawMs[r] ?? NaN) / kcat);
      const txnGoalRatios = handlerTxnMs.map((h, r) => (rawTxnMs[r] ?? NaN) / h);
      const txnCostRatios = handlerTxnMs.map((h, r) => (handlerMs[r] ?? NaN) / h);
      out[`value${bytes}B`] = {
        records: BATCH_RECORDS,
        valueBytes: bytes,
        payloadBytes,
        requestBodyBytes: Buffer.byteLength(body),
        handler: { ...figures(handlerMs), ...accounts.handler.summary() },
        httpApi: { ...figures(httpMs), ...accounts.httpApi.summary() },
        rawKafkajs: { ...figures(rawMs), ...accounts.rawKafkajs.summary() },
        rawWithHeaders: { ...figures(rawHeadersMs), ...accounts.rawWithHeaders.summary() },
        kcat: { ...figures(kcatMs), ...accounts.kcat.summary() },
        handlerTransactional: {
          ...figures(handlerTxnMs),
          ...accounts.handlerTransactional.summary(),
        },
        rawTransactional: { ...figures(rawTxnMs), ...accounts.rawTransactional.summary() },
        rawOverHandlerThroughputPerPair: spread(pairRatios),
        handlerOverRawThroughputPerPair: spread(goalRatios),
        handlerOverRawWithHeadersThroughputPerPair: spread(headersGoalRatios),
        rawWithHeadersOverRawThroughputPerPair: spread(headersCostRatios),
        rawOverHttpApiThroughputPerPair: spread(httpPairRatios),
        kcatOverRawThroughputPerPair: spread(kcatPairRatios),
        handlerTransactionalOverRawTransactionalThroughputPerPair: spread(txnGoalRatios),
        handlerTransactionalOverHandlerThroughputPerPair: spread(txnCostRatios),
      };
      note(`batch ${bytes} B: ${batchRepeats} repeats per side done`);
    }
    return {
      setup: {
        repeats: batchRepeats,
        sides: [...batchSides],
        warmup: '1 batch per side, not counted',
        schedule:
          'handler, HTTP API, raw kafkajs, raw kafkajs with headers and kcat take turns, one batch at a time',
        httpApi: 'the same records:batch request over HTTP on the local API (serverless-offline)',
        kcat: 'kcat -P (librdkafka, idempotent, acks=all) fed the 1,000 key<TAB>value lines on stdin; the process start is included',
        handler:
          'batch-handler (records:batch, {entries:[{id,key,value}]}) from the same bundle, in-process',
        rawKafkajs: 'one producer.send of the same 1,000 messages, acks -1',
        rawWithHeaders:
          'the same send with the three tally.* headers on every message (stream, a fresh seq, session), built before the clock starts',
        handlerTransactional:
          'the batch handler with Tally-Transactional: true: the 1,000 records in one Kafka transaction, committed before the answer',
        rawTransactional:
          'one kafkajs transaction of the same 1,000 messages (transaction(), send, commit), with the retry of Tally’s transactional producer',
        megabyte: '10^6 bytes of key + value payload (the handler also adds tally.* headers)',
      },
      ...out,
    };
  }

  const runs = (which: Mode) => mode === 'all' || mode === which;
  const single_ = runs('single') ? await single() : undefined;
  const batch_ = runs('batch') ? await batch() : undefined;
  const limits_ = runs('limits')
    ? {
        setup: {
          repeats: LIMITS_REPEATS,
          warmup: '1 request per side, not counted; a fresh 3-partition topic per request',
          handler: `records:batch with ${BATCH_RECORDS} BINARY values filling the body to just under ${MAX_REQUEST_BYTES} bytes (the default limits), keyed (STRING keys) or keyless, in-process`,
          rawKafkajs:
            'the same keys and values by the raw idempotent producer: sends of 150 records one after another (one send of all would be over max.message.bytes)',
        },
        ...(await limits({
          records: BATCH_RECORDS,
          maxRequestBytes: MAX_REQUEST_BYTES,
          repeats: LIMITS_REPEATS,
          raw: rawProducer,
          topic,
          fail,
          handler: async (topicName, body) => {
            const response = await invoke(
              batchHandler,
              httpEvent({
                routeKey: 'POST /v3/clusters/{cluster_id}/topics/{topic_name}/records:batch',
                pathParameters: { cluster_id: clusterId, topic_name: topicName },
                body,
              }),
            );
            const parsed = JSON.parse(response.body ?? '{}') as { failures?: unknown[] };
            return response.statusCode === 207 && parsed.failures?.length === 0;
          },
        })),
      }
    : undefined;

  // -------------------------------------------------------------------------------------------
  // 4. Ratios, 5. machine facts, output

  // Ratios pair by pair (each computed within one round or one repeat), median (min–max).
  const ratios: Record<string, Spread> = { ...ratiosPerRound };
  if (limits_) {
    ratios.limitsKeyedHandlerOverRaw = limits_.keyed.handlerOverRawPerPair;
    ratios.limitsKeylessHandlerOverRaw = limits_.keyless.handlerOverRawPerPair;
  }
  if (batch_) {
    for (const bytes of VALUE_SIZES) {
      const figures = batch_[`value${bytes}B`];
      if (!figures) continue;
      ratios[`batch${bytes}BHandlerOverRawThroughput`] = figures.handlerOverRawThroughputPerPair;
      ratios[`batch${bytes}BHandlerOverRawWithHeadersThroughput`] =
        figures.handlerOverRawWithHeadersThroughputPerPair;
      ratios[`batch${bytes}BRawWithHeadersOverRawThroughput`] =
        figures.rawWithHeadersOverRawThroughputPerPair;
      ratios[`batch${bytes}BRawOverHandlerThroughput`] = figures.rawOverHandlerThroughputPerPair;
      ratios[`batch${bytes}BRawOverHttpApiThroughput`] = figures.rawOverHttpApiThroughputPerPair;
      ratios[`batch${bytes}BKcatOverRawThroughput`] = figures.kcatOverRawThroughputPerPair;
    }
  }

  const result = {
    benchmark: 'kafka-tally publish',
    mode,
    date: startedAt.toISOString(),
    machine: {
      cores: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGiB: round3(totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      kafka: '3.9.1',
      loadAverage1m: { start: round3(loadAtStart), end: round3(loadavg()[0] ?? NaN) },
      otherJavaProcessesAtStart: otherJavaAtStart.length,
      kafkaBroker: reusing ? `reused ${stack.kafkaBrokers}` : 'single-node KRaft, started here',
      dynamodb: reusing ? `reused ${stack.dynamodbEndpoint}` : 'dynalite 4.0.0, started here',
    },
    single: single_,
    batch: batch_,
    limits: limits_,
    ratios,
    failures,
    timingsMs: {
      stackReady: Math.round(stackReadyMs),
      total: Math.round(performance.now() - wallStart),
    },
  };

  // Only complete, unprofiled runs are kept (the profiler slows the handler down).
  writeResults(
    'publish',
    { ...result, at: startedAt.toISOString() },
    markdown(single_, batch_, limits_, ratios),
    mode === 'all' && !profiling,
  );
  writeProfileWindows();
  if (Object.keys(failures).length > 0) note(`FAILED requests: ${JSON.stringify(failures)}`);
} finally {
  await finish();
}
process.exit(exitCode);

function markdown(
  single: Partial<Record<SingleMode, SingleFigures>> | undefined,
  batch: Partial<Record<BatchSize, BatchFigures>> | undefined,
  limits: Record<'keyed' | 'keyless', LimitsFigures> | undefined,
  ratios: Record<string, Spread>,
): string {
  const lines: string[] = [];
  const label: Record<string, string> = {
    handler: 'Tally handler, in-process',
    handlerIdempotencyKey: 'Tally handler with Idempotency-Key',
    httpApi: 'Tally over the local HTTP API',
    rawKafkajs: 'raw kafkajs idempotent producer',
    floorKeyless: 'floor, no key: raw kafkajs + 1 DynamoDB call',
    floorKeyed: 'floor, Idempotency-Key: raw kafkajs + 2 DynamoDB round trips (3 calls)',
    rawWithHeaders: 'raw kafkajs with the tally.* headers',
    kcat: 'kcat -P (process per batch)',
    handlerTransactional: 'Tally handler, Tally-Transactional: true',
    rawTransactional: 'raw kafkajs transactional producer (a transaction per request)',
  };
  if (single) {
    lines.push(
      `| single record, ${REQUESTS} sequential (${REQUESTS / ROUND} rounds) | p50 ms per round | p99 ms per round | DynamoDB calls/req |`,
      '|---|---:|---:|---:|',
    );
    for (const which of [
      'handler',
      'handlerIdempotencyKey',
      'httpApi',
      'rawKafkajs',
      'floorKeyless',
      'floorKeyed',
      'handlerTransactional',
      'rawTransactional',
    ] as const) {
      const entry = single[which];
      if (!entry) continue;
      lines.push(
        `| ${label[which]} | ${shown(entry.p50PerRound, 1)} | ${shown(entry.p99PerRound, 1)} | ${which === 'httpApi' ? 'in the API process, not seen' : entry.dynamodb.callsPerRequest} |`,
      );
    }
    lines.push(
      '| kcat | n/a: a process per record measures process start, not publishing | | |',
      '',
    );
  }
  if (batch) {
    lines.push(
      `| batch of ${BATCH_RECORDS.toLocaleString('en')}, ${batchRepeats} repeats | records/s | MB/s |`,
      '|---|---:|---:|',
    );
    for (const bytes of VALUE_SIZES) {
      const figures = batch[`value${bytes}B`];
      if (!figures) continue;
      for (const which of BATCH_SIDES) {
        const f = figures[which];
        if (f.recordsPerSecond.n === 0) continue; // not run (--batch-sides)
        lines.push(
          `| ${bytes} B values, ${label[which]} | ${shown(f.recordsPerSecond)} | ${shown(f.megabytesPerSecond, 2)} |`,
        );
      }
    }
    lines.push('');
    lines.push(...sideBySide(batch));
  }
  if (limits) {
    lines.push(
      `| a batch at the limits (${BATCH_RECORDS.toLocaleString('en')} records, ~${MAX_REQUEST_BYTES / 1e6} MB body), ${LIMITS_REPEATS} repeats | ms | raw kafkajs ms |`,
      '|---|---:|---:|',
    );
    for (const which of ['keyed', 'keyless'] as const) {
      const f = limits[which];
      lines.push(`| ${which} | ${shown(f.handlerMs)} | ${shown(f.rawKafkajsMs)} |`);
    }
    lines.push('');
  }
  lines.push(...goalsTable(ratios));
  if (Object.keys(ratios).length > 0) {
    lines.push('| ratio, pair by pair | median (min–max) |', '|---|---:|');
    for (const [name, ratio] of Object.entries(ratios)) {
      if (ratio.n === 0) continue; // a side not run (--batch-sides)
      lines.push(`| ${name} | ${shown(ratio, 2)} |`);
    }
  }
  return lines.join('\n');
}

/** Issue 32's goals, each against its floor measured in this run (medians, pair by pair). */
// A function, not a constant: the run's top-level code calls markdown() before a constant
// declared down here would be initialised.
function goals(): ReadonlyArray<{
  ratio: string;
  what: string;
  atMost?: number;
  atLeast?: number;
}> {
  return [
    {
      ratio: 'handlerP50OverFloorKeylessP50',
      what: 'single record p50, no key ÷ its floor',
      atMost: 1.15,
    },
    {
      ratio: 'handlerIdempotencyKeyP50OverFloorKeyedP50',
      what: 'single record p50, Idempotency-Key ÷ its floor',
      atMost: 1.15,
    },
    ...VALUE_SIZES.flatMap((bytes) => [
      {
        ratio: `batch${bytes}BHandlerOverRawWithHeadersThroughput`,
        what: `${bytes} B batch throughput ÷ raw kafkajs with the same headers`,
        atLeast: 0.8,
      },
      {
        ratio: `batch${bytes}BHandlerOverRawThroughput`,
        what: `${bytes} B batch throughput ÷ bare raw kafkajs`,
        atLeast: 0.6,
      },
    ]),
  ];
}

function goalsTable(ratios: Record<string, Spread>): string[] {
  const rows = goals().flatMap(({ ratio, what, atMost, atLeast }) => {
    const measured = ratios[ratio];
    if (measured === undefined || measured.n === 0) return [];
    const met =
      atMost !== undefined ? measured.median <= atMost : measured.median >= (atLeast ?? 0);
    const goal = atMost !== undefined ? `≤ ${atMost}` : `≥ ${atLeast}`;
    return [`| ${what} | ${shown(measured, 2)} | ${goal} | ${met ? 'met' : 'missed'} |`];
  });
  if (rows.length === 0) return [];
  return ['| goal (issue 32) | median (min–max) | goal | |', '|---|---:|---:|---|', ...rows, ''];
}

/**
 * Tally's handler beside the raw producer, batch size by batch size: throughput, the goal's ratio
 * (pair by pair), and where a batch's time goes (this process's CPU; DynamoDB calls and their
 * HTTP time, which the raw producer does not make).
 */
function sideBySide(batch: Partial<Record<BatchSize, BatchFigures>>): string[] {
  const lines = [
    `| ${BATCH_RECORDS.toLocaleString('en')}-record batch | Tally records/s | raw + headers records/s | raw kafkajs records/s | Tally ÷ raw + headers (goal ≥ 0.8) | Tally ÷ raw (goal ≥ 0.6) | batch ms, Tally / raw + headers / raw | CPU ms per batch, Tally / raw + headers / raw | DynamoDB calls, HTTP ms per batch |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const bytes of VALUE_SIZES) {
    const f = batch[`value${bytes}B`];
    if (!f || f.handler.recordsPerSecond.n === 0 || f.rawKafkajs.recordsPerSecond.n === 0) continue;
    const cpu = (side: AccountSummary) => side.cpuMsPerRequest.benchProcess.toFixed(1);
    const headers = f.rawWithHeaders.recordsPerSecond.n > 0;
    lines.push(
      `| ${bytes} B values | ${shown(f.handler.recordsPerSecond)} | ${headers ? shown(f.rawWithHeaders.recordsPerSecond) : 'not run'} | ${shown(f.rawKafkajs.recordsPerSecond)} | ${headers ? shown(f.handlerOverRawWithHeadersThroughputPerPair, 2) : 'not run'} | ${shown(f.handlerOverRawThroughputPerPair, 2)} | ${f.handler.batchMs.median.toFixed(1)} / ${headers ? f.rawWithHeaders.batchMs.median.toFixed(1) : '–'} / ${f.rawKafkajs.batchMs.median.toFixed(1)} | ${cpu(f.handler)} / ${headers ? cpu(f.rawWithHeaders) : '–'} / ${cpu(f.rawKafkajs)} | ${f.handler.dynamodb.callsPerRequest}, ${f.handler.dynamodb.httpMsPerRequest.toFixed(1)} |`,
    );
  }
  lines.push('');
  return lines;
}
