// The chaos run's independent checker. It imports nothing from functions/ (nor anything that
// does): it reads the whole topic with its own plain kafkajs consumer, the ledger and stream
// counters straight from DynamoDB (decoding the stored form itself), the answers each client
// logged, the audit report and reconcile summaries the run saved, and the committed offsets it
// sampled; then it judges what Tally promised against what happened. Its last line is the counts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { Kafka, logLevel } from 'kafkajs';

export interface ChaosManifest {
  readonly seed: number;
  readonly seconds: number;
  readonly topic: string;
  readonly bootstrap: string;
  readonly dynamodbEndpoint: string;
  readonly streamsTable: string;
  readonly ledgerTable: string;
  readonly answerFiles: readonly string[];
  readonly faultsFile: string;
  readonly auditFile: string;
  readonly reconcileFile: string;
  readonly commitsFile: string;
  /** The lookup route's answers for a sample of seqs. */
  readonly lookupFile?: string;
}

export type Fate = 'ACKED' | 'FAILED' | 'NOT_SENT' | 'UNKNOWN' | 'VOID';
export interface LedgerFate {
  readonly status: Fate;
  readonly partition?: number;
  readonly offset?: number;
}
interface LogCopy {
  readonly partition: number;
  readonly offset: number;
  readonly session: string;
  readonly value: string;
}
export interface Report {
  readonly id: string;
  readonly error_code: number;
  readonly outcome?: string;
  readonly retriable?: boolean;
  readonly message?: string;
  readonly stream?: string;
  readonly seq?: number;
  readonly partition_id?: number;
  readonly offset?: number;
}
export interface Answer {
  readonly request: string;
  readonly attempt: number;
  readonly status: number;
  readonly reports: readonly Report[];
}

/** Seqs allocated and never used, VOID in the ledger: at most this share of those allocated. */
const MAX_UNUSED_SHARE = 0.05;

export const jsonLines = <T>(file: string): T[] => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as T);
};

const header = (headers: Record<string, unknown> | undefined, name: string) => {
  const value = headers?.[name];
  return value === undefined || value === null ? undefined : String(value);
};

/** Every record of the topic, read from the low to the high watermark of each partition. */
async function readTopic(bootstrap: string, topic: string) {
  const kafka = new Kafka({
    clientId: 'tally-chaos-checker',
    brokers: bootstrap.split(','),
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const remaining = new Map(
    offsets.filter((o) => Number(o.high) > Number(o.low)).map((o) => [o.partition, Number(o.high)]),
  );
  const records: Array<{
    partition: number;
    offset: number;
    headers: Record<string, unknown>;
    value: string;
  }> = [];
  const lowWatermarks = offsets.map((o) => Number(o.low));
  if (remaining.size === 0) return { records, lowWatermarks };
  const consumer = kafka.consumer({ groupId: `tally-chaos-checker-${Date.now()}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `the topic was not read to its end in 180 s: ${[...remaining.keys()].join(',')} left`,
            ),
          ),
        180_000,
      );
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            const offset = Number(message.offset);
            const high = remaining.get(partition);
            if (high === undefined || offset >= high) return;
            const headers: Record<string, unknown> = {};
            for (const [name, value] of Object.entries(message.headers ?? {}))
              headers[name] = value?.toString();
            records.push({ partition, offset, headers, value: message.value?.toString() ?? '' });
            if (offset >= high - 1) remaining.delete(partition);
            if (remaining.size === 0) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return { records, lowWatermarks };
}

/** The ledger's stored form, decoded here on its own: ['A', p, offset] | ['F', ..] | ['N'|'U'|'V', ..]. */
function decode(encoded: unknown): LedgerFate {
  const tuple = encoded as [string, unknown, unknown];
  const status = ({ A: 'ACKED', F: 'FAILED', N: 'NOT_SENT', U: 'UNKNOWN', V: 'VOID' } as const)[
    tuple[0] as 'A'
  ];
  if (status === undefined) throw new Error(`ledger: unknown outcome ${JSON.stringify(encoded)}`);
  return status === 'ACKED'
    ? { status, partition: Number(tuple[1]), offset: Number(tuple[2]) }
    : { status };
}

export async function readLedger(
  manifest: Pick<ChaosManifest, 'dynamodbEndpoint' | 'streamsTable' | 'ledgerTable'>,
  stream: string,
) {
  const client = new DynamoDBClient({
    endpoint: manifest.dynamodbEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const documents = DynamoDBDocumentClient.from(client);
  try {
    const { Item } = await documents.send(
      new GetCommand({ TableName: manifest.streamsTable, Key: { stream }, ConsistentRead: true }),
    );
    const lastSeq = Number(Item?.lastSeq ?? 0);
    const fates = new Map<number, LedgerFate[]>();
    let start: Record<string, unknown> | undefined;
    // The whole table, read on its own terms: a stream's blocks sit under its own name (before
    // sharding) and under `<stream>#<anything>` (its shards, its VOID ranges); `<stream>#days`
    // holds day marks, not blocks. A scan, so no knowledge of the shard function is shared.
    do {
      const page = await documents.send(
        new ScanCommand({
          TableName: manifest.ledgerTable,
          FilterExpression: '(#s = :s OR begins_with(#s, :shard)) AND #s <> :days',
          ExpressionAttributeNames: { '#s': 'stream' },
          ExpressionAttributeValues: {
            ':s': stream,
            ':shard': `${stream}#`,
            ':days': `${stream}#days`,
          },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        const text =
          item.outcomesGz instanceof Uint8Array
            ? gunzipSync(item.outcomesGz).toString('utf8')
            : String(item.outcomes);
        (JSON.parse(text) as unknown[]).forEach((encoded, i) => {
          const seq = Number(item.seq) + i;
          fates.set(seq, [...(fates.get(seq) ?? []), decode(encoded)]);
        });
      }
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return { lastSeq, fates };
  } finally {
    client.destroy();
  }
}

export interface AuditDuplicate {
  readonly seq: number;
  readonly times: number;
  readonly copies: ReadonlyArray<{ readonly partition: number; readonly offset: number }>;
}
export interface AuditStream {
  readonly stream: string;
  readonly producerDuplicates: readonly AuditDuplicate[];
  readonly lost: ReadonlyArray<{ readonly from: number; readonly to: number }>;
  readonly leftOff?: Readonly<Record<string, number>>;
}

export interface CheckResult {
  readonly ok: boolean;
  readonly failures: readonly string[];
  /** Tolerated failures (CheckOptions.tolerate), for the log. */
  readonly known: readonly string[];
  readonly counts: Readonly<Record<string, number>>;
  readonly lastLine: string;
}

export interface CheckOptions {
  /**
   * Failure classes reported as known (counted on the last line, listed as KNOWN) instead of
   * failing the run. Only for a bug found, reported and being fixed elsewhere: see RELIABILITY.md.
   */
  readonly tolerate?: ReadonlyArray<'sameSession' | 'unknownDowngraded'>;
}

/** Everything the checker judges, as read: the pure `judgeChaosRun` takes this. */
export interface ChaosEvidence {
  readonly seed: number;
  readonly stream: string;
  readonly records: ReadonlyArray<{
    readonly partition: number;
    readonly offset: number;
    readonly headers: Record<string, unknown>;
    readonly value: string;
  }>;
  readonly lowWatermarks: readonly number[];
  readonly lastSeq: number;
  readonly fates: ReadonlyMap<number, readonly LedgerFate[]>;
  readonly answers: readonly Answer[];
  readonly faults: ReadonlyArray<{ readonly phase: string }>;
  readonly audits: ReadonlyArray<{
    readonly label: string;
    readonly report?: { readonly complete: boolean; readonly streams: readonly AuditStream[] };
    readonly error?: string;
  }>;
  readonly reconciles: ReadonlyArray<{
    readonly summary?: {
      readonly problems: ReadonlyArray<{
        readonly group: string;
        readonly anomalies: Readonly<Record<string, number>>;
      }>;
    };
  }>;
  readonly commits: ReadonlyArray<{
    readonly group: string;
    readonly partition: number;
    readonly offset: number;
  }>;
  /** The lookup route's answers for a sample of seqs. */
  readonly lookups?: ReadonlyArray<{
    readonly seq: number;
    readonly status: number;
    readonly body: {
      readonly records?: ReadonlyArray<{
        readonly seq: number;
        readonly outcome: string;
        readonly partition_id?: number;
        readonly offset?: number;
      }>;
    };
  }>;
}

/** Reads the run's evidence (the topic, the ledger, the files) and judges it. */
export async function checkChaosRun(
  manifest: ChaosManifest,
  options: CheckOptions = {},
): Promise<CheckResult> {
  const stream = manifest.topic; // the workload publishes to the topic's default stream
  const { records, lowWatermarks } = await readTopic(manifest.bootstrap, manifest.topic);
  const { lastSeq, fates } = await readLedger(manifest, stream);
  return judgeChaosRun(
    {
      seed: manifest.seed,
      stream,
      records,
      lowWatermarks,
      lastSeq,
      fates,
      answers: manifest.answerFiles.flatMap((file) => jsonLines<Answer>(file)),
      faults: jsonLines<{ phase: string }>(manifest.faultsFile),
      audits: jsonLines(manifest.auditFile),
      reconciles: jsonLines(manifest.reconcileFile),
      commits: jsonLines(manifest.commitsFile),
      lookups: manifest.lookupFile === undefined ? [] : jsonLines(manifest.lookupFile),
    },
    options,
  );
}

export function judgeChaosRun(evidence: ChaosEvidence, options: CheckOptions = {}): CheckResult {
  const failures: string[] = [];
  const known: string[] = [];
  const fail = (what: string) => {
    if (failures.length < 200) failures.push(what);
  };
  const { stream, records, lowWatermarks, lastSeq, fates, answers, audits, reconciles, commits } =
    evidence;
  const faults = evidence.faults.filter((f) => f.phase === 'inject');

  // The log, by seq.
  const copies = new Map<number, LogCopy[]>();
  const atPlace = new Map<string, number>();
  let untracked = 0;
  for (const record of records) {
    const seqText = header(record.headers, 'tally.seq');
    if (header(record.headers, 'tally.stream') !== stream || seqText === undefined) {
      untracked++;
      continue;
    }
    const seq = Number(seqText);
    const copy = {
      partition: record.partition,
      offset: record.offset,
      session: header(record.headers, 'tally.session') ?? '',
      value: record.value,
    };
    copies.set(seq, [...(copies.get(seq) ?? []), copy]);
    atPlace.set(`${record.partition}:${record.offset}`, seq);
  }
  const inLogAt = (seq: number, partition: number | undefined, offset: number | undefined) =>
    atPlace.get(`${partition}:${offset}`) === seq;

  // 1. What each client was answered; its final word per seq.
  const lost = new Set<number>();
  // Too few in-sync replicas (two brokers down): named as such, and retriable.
  let notEnoughReplicas = 0;
  const finalAnswer = new Map<number, Report>();
  // Seqs some attempt was answered UNKNOWN for (sent, maybe written).
  const everUnknown = new Set<number>();
  // A retry's "not written" replacing an earlier attempt's UNKNOWN, for a record that landed.
  const downgraded = (seq: number) =>
    everUnknown.has(seq) && options.tolerate?.includes('unknownDowngraded')
      ? (what: string) => known.push(what)
      : fail;
  const ordered = [...answers].sort(
    (a, b) => a.request.localeCompare(b.request) || a.attempt - b.attempt,
  );
  for (const answer of ordered) {
    for (const report of answer.reports) {
      if (report.seq === undefined || (report.stream !== undefined && report.stream !== stream))
        continue;
      finalAnswer.set(report.seq, report);
      if (report.outcome === 'UNKNOWN') everUnknown.add(report.seq);
      if (report.message?.includes('NOT_ENOUGH_REPLICAS')) {
        notEnoughReplicas++;
        if (report.retriable !== true)
          fail(
            `${answer.request}: seq ${report.seq} refused for too few in-sync replicas, answered not retriable`,
          );
      }
      if (report.error_code === 200 && !inLogAt(report.seq, report.partition_id, report.offset)) {
        lost.add(report.seq);
        fail(
          `${answer.request} #${answer.attempt}: seq ${report.seq} answered ACKED at ${report.partition_id}:${report.offset}, not there in the log`,
        );
      }
    }
  }
  for (const [seq, report] of finalAnswer) {
    if (['NOT_SENT', 'FAILED', 'VOID'].includes(String(report.outcome)) && copies.has(seq)) {
      downgraded(seq)(
        `seq ${seq}: the client's last answer was ${report.outcome} (not written), the log holds it`,
      );
    }
  }

  // 2. The ledger: one fate per seq, none UNKNOWN after the audit, ACKED ones in the log.
  const tally: Record<Fate, number> = { ACKED: 0, FAILED: 0, NOT_SENT: 0, UNKNOWN: 0, VOID: 0 };
  let noFate = 0;
  for (let seq = 1; seq <= lastSeq; seq++) {
    const list = fates.get(seq) ?? [];
    if (list.length !== 1) {
      if (list.length === 0) noFate++;
      fail(
        `seq ${seq}: ${list.length} fates in the ledger (${list.map((f) => f.status).join(',')})`,
      );
      continue;
    }
    const fate = list[0] as LedgerFate;
    tally[fate.status]++;
    if (fate.status === 'ACKED' && !inLogAt(seq, fate.partition, fate.offset)) {
      lost.add(seq);
      fail(`seq ${seq}: ledger ACKED at ${fate.partition}:${fate.offset}, not there in the log`);
    }
    if (fate.status !== 'ACKED' && fate.status !== 'UNKNOWN' && copies.has(seq)) {
      downgraded(seq)(`seq ${seq}: ledger ${fate.status} (not written), the log holds it`);
    }
    const answered = finalAnswer.get(seq);
    if (answered?.error_code === 200 && fate.status !== 'ACKED') {
      fail(`seq ${seq}: answered ACKED, the ledger says ${fate.status}`);
    }
  }
  for (const seq of fates.keys())
    if (seq > lastSeq) fail(`seq ${seq}: in the ledger, above the counter ${lastSeq}`);
  for (const seq of copies.keys())
    if (seq > lastSeq || seq < 1)
      fail(`seq ${seq}: in the log, never allocated (counter ${lastSeq})`);
  if (tally.UNKNOWN > 0) fail(`${tally.UNKNOWN} seq(s) still UNKNOWN after the final audit`);
  // Seqs allocated and never sent (lease rests, requests that gave up): a small share (issue 31).
  if (tally.VOID > MAX_UNUSED_SHARE * lastSeq)
    fail(
      `${tally.VOID} of ${lastSeq} allocated seqs VOID (${((100 * tally.VOID) / lastSeq).toFixed(1)} %), more than ${100 * MAX_UNUSED_SHARE} % unused`,
    );

  // The lookup route says what the ledger says.
  for (const looked of evidence.lookups ?? []) {
    const fate = fates.get(looked.seq)?.[0];
    const said = looked.body.records?.find((r) => r.seq === looked.seq);
    if (looked.status !== 200 || said === undefined) {
      if (fate !== undefined)
        fail(`lookup of seq ${looked.seq}: ${looked.status}, the ledger has ${fate.status}`);
      continue;
    }
    const same =
      fate !== undefined &&
      said.outcome === fate.status &&
      (fate.status !== 'ACKED' ||
        (said.partition_id === fate.partition && said.offset === fate.offset));
    if (!same)
      fail(
        `lookup of seq ${looked.seq}: ${JSON.stringify(said)}, the ledger has ${JSON.stringify(fate)}`,
      );
  }

  // 3. Copies: never twice in one producer session; across sessions, named by the audit.
  const final = audits.filter((a) => a.label === 'final').at(-1);
  const findings = final?.report?.streams.find((s) => s.stream === stream);
  if (!final?.report?.complete)
    fail(`the final audit did not complete: ${final?.error ?? 'no report'}`);
  // A report names its newest duplicates (counting older ones): audits run on a schedule, and a
  // duplicate counts as named by the latest report that lists it.
  const named = new Map<number, AuditDuplicate>();
  for (const audit of audits) {
    const listed = audit.report?.streams.find((s) => s.stream === stream);
    for (const duplicate of listed?.producerDuplicates ?? []) named.set(duplicate.seq, duplicate);
  }
  let duplicates = 0;
  let explained = 0;
  let sameSession = 0;
  for (const [seq, list] of copies) {
    if (new Set(list.map((c) => c.value)).size > 1)
      fail(`seq ${seq}: copies with different values`);
    if (list.length < 2) continue;
    const sessions = new Map<string, number>();
    for (const copy of list) sessions.set(copy.session, (sessions.get(copy.session) ?? 0) + 1);
    for (const [session, n] of sessions) {
      if (n > 1) {
        sameSession++;
        (options.tolerate?.includes('sameSession') ? (w: string) => known.push(w) : fail)(
          `seq ${seq}: ${n} copies in one producer session ${session} (${list.map((c) => `${c.partition}:${c.offset}`).join(' ')})`,
        );
      }
    }
    duplicates++;
    const entry = named.get(seq);
    const all = list.every((c) =>
      entry?.copies.some((n) => n.partition === c.partition && n.offset === c.offset),
    );
    if (entry && entry.times === list.length && all) explained++;
    else
      fail(
        `seq ${seq}: ${list.length} copies (${list.map((c) => `${c.partition}:${c.offset}`).join(' ')}), the audit names ${entry ? `${entry.times} (${entry.copies.length} placed)` : 'none'}`,
      );
  }
  for (const range of findings?.lost ?? []) {
    for (let seq = range.from; seq <= range.to; seq++) {
      if (copies.has(seq)) fail(`seq ${seq}: the audit calls it lost, the log holds it`);
    }
  }
  // The same record (entry id) under two seqs: a resend after an answer that said "not written".
  const byValue = new Map<string, Set<number>>();
  for (const [seq, list] of copies)
    for (const c of list) byValue.set(c.value, (byValue.get(c.value) ?? new Set()).add(seq));
  const resentRecords = [...byValue.values()].filter((seqs) => seqs.size > 1).length;

  // 4. Reconcile: a REWIND needs a commit that went down; LOST needs records removed from the log.
  const rewound = new Set<string>();
  const lastCommit = new Map<string, number>();
  for (const c of commits) {
    const key = `${c.group}\u0000${c.partition}`;
    const before = lastCommit.get(key);
    if (before !== undefined && c.offset >= 0 && c.offset < before) rewound.add(c.group);
    if (c.offset >= 0) lastCommit.set(key, c.offset);
  }
  let falseAnomalies = 0;
  for (const run of reconciles) {
    for (const problem of run.summary?.problems ?? []) {
      if ((problem.anomalies.REWIND ?? 0) > 0 && !rewound.has(problem.group)) {
        falseAnomalies++;
        fail(`reconcile: REWIND in group ${problem.group}, whose commits never went down`);
      }
      if ((problem.anomalies.LOST ?? 0) > 0 && lowWatermarks.every((low) => low === 0)) {
        falseAnomalies++;
        fail(`reconcile: LOST in group ${problem.group}, nothing was ever removed from the log`);
      }
    }
  }

  const requests = new Set(answers.map((a) => a.request)).size;
  const counts = {
    requests,
    attempts: answers.length,
    seqs: lastSeq,
    ...tally,
    inLog: records.length - untracked,
    faults: faults.length,
    notEnoughReplicas,
    duplicates,
    explained,
    sameSession,
    lost: lost.size,
    noFate,
    resentRecords,
    reconcileRuns: reconciles.length,
    lookups: evidence.lookups?.length ?? 0,
    falseRewindLost: falseAnomalies,
  };
  const ok = failures.length === 0;
  const tolerated = known.length > 0 ? ` KNOWN(${known.length})` : '';
  const lastLine = `chaos checker seed=${evidence.seed} ${ok ? 'PASS' : `FAIL(${failures.length})`}${tolerated} ${Object.entries(
    counts,
  )
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}`;
  return { ok, failures, known, counts, lastLine };
}

// `node --import tsx test/chaos/checker.ts <run dir>`: checks a kept run whose services still run.
if (process.argv[1]?.endsWith('checker.ts') && process.argv[2]) {
  const manifest = JSON.parse(
    readFileSync(join(process.argv[2], 'manifest.json'), 'utf8'),
  ) as ChaosManifest;
  const result = await checkChaosRun(manifest);
  for (const failure of result.failures) process.stdout.write(`FAIL ${failure}\n`);
  process.stdout.write(`${result.lastLine}\n`);
  process.exit(result.ok ? 0 : 1);
}
