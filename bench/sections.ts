// The benchmark sections bench/run.ts runs, and what each must print: the paths of the figures
// its table shows, each a finite number (`*`: every element of an array or every value of an
// object, at least one; `{a,b}`: each of a and b). bench/run.ts checks every section's JSON against its list
// (section-runner.ts), in a full run and in the smoke run `npm test` makes
// (test/integration/bench-smoke.test.ts).

export interface Section {
  readonly file: string;
  readonly title: string;
  readonly figures: readonly string[];
}

const SINGLE =
  '{handler,handlerIdempotencyKey,httpApi,rawKafkajs,floorKeyless,floorKeyed,handlerTransactional,rawTransactional}';
const BATCH = 'batch.{value100B,value1024B}';
const SPREAD = '{median,min,max}';

export const SECTIONS = {
  publish: {
    file: 'bench/publish.ts',
    title: 'Publish',
    figures: [
      `single.${SINGLE}.{p50PerRound,p99PerRound}.${SPREAD}`,
      `single.${SINGLE}.dynamodb.callsPerRequest`,
      `${BATCH}.{handler,httpApi,rawKafkajs,rawWithHeaders,kcat,handlerTransactional,rawTransactional}.{recordsPerSecond,megabytesPerSecond}.${SPREAD}`,
      `${BATCH}.{handler,rawKafkajs,rawWithHeaders}.batchMs.median`,
      `${BATCH}.{handler,rawKafkajs,rawWithHeaders}.cpuMsPerRequest.benchProcess`,
      `${BATCH}.handler.dynamodb.{callsPerRequest,httpMsPerRequest}`,
      `${BATCH}.{handlerOverRawThroughputPerPair,handlerOverRawWithHeadersThroughputPerPair}.${SPREAD}`,
      `${BATCH}.{handlerTransactionalOverRawTransactionalThroughputPerPair,handlerTransactionalOverHandlerThroughputPerPair}.${SPREAD}`,
      `ratios.{handlerTransactionalP50OverRawTransactionalP50,handlerTransactionalP50OverHandlerP50}.${SPREAD}`,
      `ratios.{handlerP50OverFloorKeylessP50,handlerIdempotencyKeyP50OverFloorKeyedP50}.${SPREAD}`,
      `ratios.{batch100BHandlerOverRawWithHeadersThroughput,batch1024BHandlerOverRawWithHeadersThroughput}.${SPREAD}`,
      `limits.{keyed,keyless}.{handlerMs,rawKafkajsMs}.${SPREAD}`,
      `ratios.*.${SPREAD}`,
    ],
  },
  audit: {
    file: 'bench/audit.ts',
    title: 'Audit',
    figures: [
      'results.*.{records,runs}',
      `results.*.{raw,audit}.{recordsPerSecond,peakRssMB}.${SPREAD}`,
      `results.*.auditOverRawTimePerPair.${SPREAD}`,
      'results.*.incremental.wallMs',
    ],
  },
  auditHorizon: {
    file: 'bench/audit-horizon.ts',
    title: 'Audit checkpoint over 180 days',
    figures: ['rows.*.sizes.*', 'rows.{1,3,4}.max', 'tenStreams.{missed,maxReportBytes,seconds}'],
  },
  reconcile: {
    file: 'bench/reconcile.ts',
    title: 'Reconcile',
    figures: [
      'runs.*.{groups,partitionsPerGroup,expectedAdminCalls}',
      'runs.*.{cold,warm}.{wallMs,adminCalls}',
      'runs.*.{cold,warm}.dynamodb.{writes,httpMs}',
      'runs.*.{cold,warm}.phasesMs.{inPortsMs,outsidePortsMs,overlapMs}',
      `runs.*.warmWallMs.${SPREAD}`,
    ],
  },
  coldStart: {
    file: 'bench/cold-start.ts',
    title: 'Cold start',
    figures: [
      'functions.*.bundleBytes',
      `functions.*.{initMs,initCpuMs}.${SPREAD}`,
      `anchors.*.{initMs,initCpuMs}.${SPREAD}`,
    ],
  },
  workflows: {
    file: 'bench/workflows.ts',
    title: 'Workflows at cluster size',
    figures: [
      'offsetRepair.*.{partitions,groups,ms}',
      'offsetRepair.*.before.{reconcile,planRepair}',
      'offsetRepair.*.after.{reconcile,planRepair,executeRepair}',
      'publishAndVerify.{records,ms}',
      'publishAndVerify.after.*',
    ],
  },
  seqAllocation: {
    file: 'bench/seq-allocation.ts',
    title: 'Seq allocation on one stream',
    figures: [
      'results.*.{maxLease,seqsPerSecond,secondHalfSeqsPerSecond,counterUpdatesPerSecond,seqsPerUpdate}',
      'results.*.{p50Ms,p99Ms,unused,duplicates}',
    ],
  },
  ledgerShards: {
    file: 'bench/ledger-shards.ts',
    title: 'Ledger writes on one stream, each key held to 1,000 writes/s',
    figures: [
      'results.*.{requestsPerSecond,writesPerSecond,busiestKeyWritesPerSecond}',
      'results.*.{keysWritten,limitAllowsRequestsPerSecond}',
    ],
  },
  fanOut: {
    file: 'bench/fan-out.ts',
    title: 'Fan-out beside one function (audit, reconcile)',
    figures: ['{audit,reconcile}.{sequentialMs,fanOutMs,speedUp}', 'audit.{records,children}'],
  },
  once: {
    file: 'bench/once.ts',
    title: 'Once guard: per-record overhead',
    figures: ['perRecordMicros.{unguarded,guardedNewSeqs,guardedRedelivered}'],
  },
  schema: {
    file: 'bench/schema.ts',
    title: 'Schema serialization: per-record cost beside plain JSON',
    figures: [
      'perRecordMicros.{plainJson,avro,protobuf,jsonSchema}',
      'bytesWritten.{JSON,AVRO,PROTOBUF,JSONSCHEMA}',
      'firstRecordMs.{AVRO,PROTOBUF,JSON}',
    ],
  },
} as const satisfies Record<string, Section>;
export type SectionName = keyof typeof SECTIONS;

/** A number under a key (or in an object under a key) named so is a duration: never negative. */
const DURATION = /(?:^ms|Ms|^seconds|Seconds|Micros)$/;
/** Differences of two durations, which noise may take below zero. */
const DIFFERENCES = new Set(['overheadPerRecordMicros']);

function resolve(value: unknown, path: readonly string[], at: string): string[] {
  if (path.length === 0) {
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      return [
        `${at}: ${value === undefined ? 'missing' : `${JSON.stringify(value)}, not a finite number`}`,
      ];
    }
    return [];
  }
  const [head, ...rest] = path as [string, ...string[]];
  if (value === null || typeof value !== 'object') return [`${at}.${path.join('.')}: missing`];
  if (head === '*') {
    const entries = Object.entries(value);
    if (entries.length === 0) return [`${at}.*: none`];
    return entries.flatMap(([key, item]) => resolve(item, rest, `${at}.${key}`));
  }
  return resolve((value as Record<string, unknown>)[head], rest, `${at}.${head}`);
}

function negativeDurations(value: unknown, at: string, key: string, parent: string): string[] {
  if (typeof value === 'number') {
    const duration = (DURATION.test(key) || DURATION.test(parent)) && !DIFFERENCES.has(key);
    return duration && value < 0 ? [`${at}: ${value}, a negative duration`] : [];
  }
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => negativeDurations(v, `${at}.${k}`, k, key));
}

/** `a.{b,c}.d` → `a.b.d`, `a.c.d` (every brace, left to right). */
export function expand(path: string): string[] {
  const match = /\{([^{}]*)\}/.exec(path);
  if (!match) return [path];
  const [whole, inner = ''] = match;
  return inner.split(',').flatMap((choice) => expand(path.replace(whole, choice)));
}

/** What is wrong with a section's JSON: figures missing or not numbers, negative durations. */
export function figureProblems(json: unknown, figures: readonly string[]): string[] {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return ['the result is not a JSON object'];
  }
  const table = (json as { table?: unknown }).table;
  const problems = typeof table === 'string' && table.trim() !== '' ? [] : ['table: missing'];
  for (const figure of figures.flatMap(expand)) {
    problems.push(...resolve(json, figure.split('.'), ''));
  }
  problems.push(...negativeDurations(json, '', '', ''));
  return problems.map((p) => p.replace(/^\./, ''));
}
