// The chaos run's checker for the transactional workload (issue 33). Like checker.ts it imports
// nothing from functions/: it reads the transactional topic with its own plain kafkajs consumers:
// the whole log with its transaction markers (read_uncommitted), from which it works out what
// read_committed promises (committedView), and kafkajs's own read_committed view
// (`readUncommitted: false`) for comparison, each up to a marker it produces to every partition;
// the ledger straight from DynamoDB (checker.ts's own decoding); the answers the transactional
// clients logged; the lookup route's answers the run asked for after the bound. Then it judges:
// a record a read_committed consumer sees twice, an ACKED record it does not see at its offsets,
// a record answered not written that it sees, an UNKNOWN still UNKNOWN past (transaction timeout
// + request deadline) after the faults heal.
import { Kafka, logLevel } from 'kafkajs';
import { type Answer, jsonLines, type LedgerFate, readLedger } from './checker.js';

export interface TxnManifest {
  readonly seed: number;
  readonly topic: string;
  readonly bootstrap: string;
  readonly dynamodbEndpoint: string;
  readonly streamsTable: string;
  readonly ledgerTable: string;
  readonly answerFiles: readonly string[];
  readonly faultsFile: string;
  readonly auditFile: string;
  readonly lookupFile: string;
  /** TALLY_TXN_TIMEOUT_MS the run's publishers had. */
  readonly transactionTimeoutMs: number;
  /** The deadline each request asked for (Tally-Timeout-Ms). */
  readonly requestDeadlineMs: number;
}

export interface SeenRecord {
  readonly partition: number;
  readonly offset: number;
  readonly headers: Record<string, unknown>;
  readonly value: string;
}

/** An answer line as the publishers log it; `answeredAt` dates an UNKNOWN. */
export type TxnAnswer = Answer & { readonly answeredAt?: string };

export interface TxnLookup {
  readonly seq: number;
  readonly at?: string;
  readonly status: number;
  readonly body: {
    readonly records?: ReadonlyArray<{
      readonly seq: number;
      readonly outcome: string;
      readonly partition_id?: number;
      readonly offset?: number;
    }>;
  };
}

/** Everything the transactional judgement takes, as read: `judgeTransactionalRun` is pure. */
export interface TxnEvidence {
  readonly seed: number;
  readonly stream: string;
  /** What read_committed promises (committedView of the markers). */
  readonly committed: readonly SeenRecord[];
  /** Transactional records with no marker after them when the topic was read. */
  readonly openAtEnd?: number;
  /** Records kafkajs's read_committed consumer showed that the markers say were not committed. */
  readonly kafkajsShownAborted?: number;
  /** How many tracked records a read_uncommitted consumer saw (aborted copies included). */
  readonly uncommittedCount: number;
  readonly lastSeq: number;
  readonly fates: ReadonlyMap<number, readonly LedgerFate[]>;
  readonly answers: readonly TxnAnswer[];
  readonly faults: ReadonlyArray<{ readonly phase: string; readonly at?: string }>;
  readonly audits: ReadonlyArray<{
    readonly label: string;
    readonly report?: { readonly complete: boolean };
    readonly error?: string;
  }>;
  readonly lookups: readonly TxnLookup[];
  readonly boundMs: number;
}

export interface TxnCheckResult {
  readonly ok: boolean;
  readonly failures: readonly string[];
  readonly counts: Readonly<Record<string, number>>;
  readonly lastLine: string;
}

const MARKER = 'chaos-txn-checker-marker-';
const NOT_WRITTEN = ['NOT_SENT', 'FAILED', 'VOID'];
const text = (headers: Record<string, unknown>, name: string) => {
  const value = headers[name];
  return value === undefined || value === null ? undefined : String(value);
};

/**
 * Every record of the topic one consumer at `isolation` sees, up to a marker this reader produced
 * to each partition (a read_committed consumer stops at an open transaction: it ends, committed
 * or aborted by the coordinator's timeout, or the read fails after `timeoutMs`).
 */
export async function readAtIsolation(
  bootstrap: string,
  topic: string,
  isolation: 'read_committed' | 'read_uncommitted',
  timeoutMs = 240_000,
): Promise<SeenRecord[]> {
  const kafka = new Kafka({
    clientId: 'tally-chaos-txn-checker',
    brokers: bootstrap.split(','),
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const partitions = (await admin.fetchTopicOffsets(topic)).map((o) => o.partition);
  await admin.disconnect();
  const marker = `${MARKER}${isolation}-${Date.now()}`;
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await producer.send({
    topic,
    messages: partitions.map((partition) => ({ partition, value: marker })),
  });
  await producer.disconnect();
  const waiting = new Set(partitions);
  const records: SeenRecord[] = [];
  const consumer = kafka.consumer({
    groupId: `tally-chaos-txn-checker-${isolation}-${Date.now()}`,
    readUncommitted: isolation === 'read_uncommitted',
    maxWaitTimeInMs: 200,
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `${isolation}: no marker in ${timeoutMs} ms on partition(s) ${[...waiting].join(',')} (a transaction left open?)`,
            ),
          ),
        timeoutMs,
      );
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            const value = message.value?.toString() ?? '';
            if (value === marker) {
              waiting.delete(partition);
              if (waiting.size === 0) {
                clearTimeout(timer);
                resolve();
              }
              return;
            }
            if (value.startsWith(MARKER) || !waiting.has(partition)) return;
            const headers: Record<string, unknown> = {};
            for (const [name, v] of Object.entries(message.headers ?? {}))
              headers[name] = v?.toString();
            records.push({ partition, offset: Number(message.offset), headers, value });
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return records;
}

/** A record as the log holds it, control records (transaction markers) included. */
export interface LogEntry extends SeenRecord {
  readonly producerId: string;
  readonly inTransaction: boolean;
  /** A transaction marker: true COMMIT, false ABORT; undefined for a data record. */
  readonly commit?: boolean;
}

/**
 * What read_committed promises, worked out from the markers themselves (as Kafka's Java consumer
 * does): a transactional record counts once its producer's next marker in that partition is a
 * COMMIT; an ABORT drops it; no marker yet, it is not committed. Records outside transactions
 * count at once. Needed because kafkajs 2.2.4's read_committed can show aborted records:
 * `consumer/filterAbortedMessages.js` takes the fetch's aborted-transaction list as sorted by
 * first offset, which Kafka does not promise (seed 203: two producers' aborted transactions
 * interleaved in one partition; the second one's records were shown).
 */
export function committedView(entries: readonly LogEntry[]): {
  committed: SeenRecord[];
  open: number;
} {
  const committed: SeenRecord[] = [];
  const pending = new Map<string, SeenRecord[]>();
  const byPlace = [...entries].sort((a, b) => a.partition - b.partition || a.offset - b.offset);
  let partition = byPlace[0]?.partition;
  let open = 0;
  const endPartition = () => {
    for (const list of pending.values()) open += list.length;
    pending.clear();
  };
  for (const entry of byPlace) {
    if (entry.partition !== partition) {
      endPartition();
      partition = entry.partition;
    }
    const key = entry.producerId;
    if (entry.commit !== undefined) {
      if (entry.commit) committed.push(...(pending.get(key) ?? []));
      pending.delete(key);
    } else if (entry.inTransaction) {
      pending.set(key, [...(pending.get(key) ?? []), entry]);
    } else {
      committed.push(entry);
    }
  }
  endPartition();
  committed.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
  return { committed, open };
}

interface RawMessage {
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers?: Record<string, Buffer | string | undefined>;
  readonly isControlRecord?: boolean;
  readonly batchContext?: { readonly producerId?: string; readonly inTransaction?: boolean };
}

/** Every record and marker of the topic (read_uncommitted), up to a marker this reader produced. */
export async function readLogWithMarkers(
  bootstrap: string,
  topic: string,
  timeoutMs = 240_000,
): Promise<LogEntry[]> {
  const kafka = new Kafka({
    clientId: 'tally-chaos-txn-checker',
    brokers: bootstrap.split(','),
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const partitions = (await admin.fetchTopicOffsets(topic)).map((o) => o.partition);
  await admin.disconnect();
  const marker = `${MARKER}log-${Date.now()}`;
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await producer.send({
    topic,
    messages: partitions.map((partition) => ({ partition, value: marker })),
  });
  await producer.disconnect();
  const waiting = new Set(partitions);
  const entries: LogEntry[] = [];
  const consumer = kafka.consumer({
    groupId: `tally-chaos-txn-checker-log-${Date.now()}`,
    readUncommitted: true,
    maxWaitTimeInMs: 200,
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `the log: no marker in ${timeoutMs} ms on partition(s) ${[...waiting].join(',')}`,
            ),
          ),
        timeoutMs,
      );
      consumer
        .run({
          eachBatch: async ({ batch }) => {
            // The batch's records before kafkajs drops control records: the markers are needed.
            const raw = (batch as unknown as { messagesWithinOffset: RawMessage[] })
              .messagesWithinOffset;
            for (const message of raw) {
              if (!waiting.has(batch.partition)) return;
              const value = message.value?.toString() ?? '';
              if (value === marker) {
                waiting.delete(batch.partition);
                if (waiting.size === 0) {
                  clearTimeout(timer);
                  resolve();
                }
                return;
              }
              if (value.startsWith(MARKER)) continue;
              const headers: Record<string, unknown> = {};
              for (const [name, v] of Object.entries(message.headers ?? {}))
                headers[name] = v?.toString();
              const key = message.key ?? Buffer.alloc(0);
              entries.push({
                partition: batch.partition,
                offset: Number(message.offset),
                headers,
                value,
                producerId: String(message.batchContext?.producerId ?? ''),
                inTransaction: message.batchContext?.inTransaction === true,
                // A control record's key: version (int16), type (int16: 0 ABORT, 1 COMMIT).
                ...(message.isControlRecord === true && {
                  commit: key.length >= 4 && key.readInt16BE(2) === 1,
                }),
              });
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return entries;
}

/** Reads the transactional workload's evidence and judges it. */
export async function checkTransactionalRun(manifest: TxnManifest): Promise<TxnCheckResult> {
  const stream = manifest.topic; // the workload publishes to the topic's default stream
  const log = await readLogWithMarkers(manifest.bootstrap, manifest.topic);
  const { committed, open } = committedView(log);
  // kafkajs's own read_committed, for comparison: records it shows that the markers aborted.
  const shown = await readAtIsolation(manifest.bootstrap, manifest.topic, 'read_committed');
  const place = (r: SeenRecord) => `${r.partition}:${r.offset}`;
  const committedPlaces = new Set(committed.map(place));
  const { lastSeq, fates } = await readLedger(manifest, stream);
  return judgeTransactionalRun({
    seed: manifest.seed,
    stream,
    committed,
    openAtEnd: open,
    kafkajsShownAborted: shown.filter((r) => !committedPlaces.has(place(r))).length,
    uncommittedCount: log.filter(
      (r) => r.commit === undefined && text(r.headers, 'tally.stream') === stream,
    ).length,
    lastSeq,
    fates,
    answers: manifest.answerFiles.flatMap((file) => jsonLines<TxnAnswer>(file)),
    faults: jsonLines(manifest.faultsFile),
    audits: jsonLines(manifest.auditFile),
    lookups: jsonLines(manifest.lookupFile),
    boundMs: manifest.transactionTimeoutMs + manifest.requestDeadlineMs,
  });
}

export function judgeTransactionalRun(evidence: TxnEvidence): TxnCheckResult {
  const failures: string[] = [];
  const fail = (what: string) => {
    if (failures.length < 200) failures.push(what);
  };
  const { stream, committed, lastSeq, fates, boundMs } = evidence;

  // What a read_committed consumer sees, by seq and by the workload's own record id (the value).
  const seen = new Map<number, SeenRecord[]>();
  const atPlace = new Map<string, number>();
  const seqsOfValue = new Map<string, Set<number>>();
  for (const record of committed) {
    const seqText = text(record.headers, 'tally.seq');
    if (text(record.headers, 'tally.stream') !== stream || seqText === undefined) {
      fail(`read_committed: ${record.partition}:${record.offset} carries no ${stream} seq`);
      continue;
    }
    const seq = Number(seqText);
    seen.set(seq, [...(seen.get(seq) ?? []), record]);
    atPlace.set(`${record.partition}:${record.offset}`, seq);
    seqsOfValue.set(record.value, (seqsOfValue.get(record.value) ?? new Set()).add(seq));
  }
  const visibleAt = (seq: number, partition?: number, offset?: number) =>
    atPlace.get(`${partition}:${offset}`) === seq;
  const places = (list: readonly SeenRecord[]) =>
    list.map((r) => `${r.partition}:${r.offset}`).join(' ');

  // 1. Seen twice: the same seq, or the same record id under two seqs (a resend of a record
  // answered not written whose first copy committed after all).
  let readCommittedDuplicates = 0;
  for (const [seq, list] of seen) {
    if (list.length > 1) {
      readCommittedDuplicates++;
      fail(`seq ${seq}: a read_committed consumer sees it ${list.length} times (${places(list)})`);
    }
    if (seq < 1 || seq > lastSeq) fail(`seq ${seq}: seen, never allocated (counter ${lastSeq})`);
  }
  for (const [value, seqs] of seqsOfValue) {
    if (seqs.size > 1) {
      readCommittedDuplicates++;
      fail(`record ${value}: a read_committed consumer sees it under seqs ${[...seqs].join(', ')}`);
    }
  }

  // 2. The answers: every ACKED seen at its offsets; the last word per seq; UNKNOWNs dated.
  const lost = new Set<number>();
  const finalAnswer = new Map<number, { outcome: string; at: number }>();
  /** Seq → when an UNKNOWN answer about it came, and whether a later answer settled it. */
  const unknownAt = new Map<number, number>();
  const ordered = [...evidence.answers].sort(
    (a, b) => a.request.localeCompare(b.request) || a.attempt - b.attempt,
  );
  for (const answer of ordered) {
    const at = answer.answeredAt === undefined ? 0 : Date.parse(answer.answeredAt);
    for (const report of answer.reports) {
      if (report.seq === undefined || (report.stream !== undefined && report.stream !== stream))
        continue;
      const outcome = report.error_code === 200 ? 'ACKED' : String(report.outcome);
      finalAnswer.set(report.seq, { outcome, at });
      if (outcome === 'UNKNOWN') unknownAt.set(report.seq, at);
      else unknownAt.delete(report.seq); // a keyed retry settled it
      if (outcome === 'ACKED' && !visibleAt(report.seq, report.partition_id, report.offset)) {
        lost.add(report.seq);
        fail(
          `${answer.request} #${answer.attempt}: seq ${report.seq} answered ACKED at ${report.partition_id}:${report.offset}, which a read_committed consumer does not see there`,
        );
      }
    }
  }
  let visibleNotWritten = 0;
  for (const [seq, { outcome }] of finalAnswer) {
    if (NOT_WRITTEN.includes(outcome) && seen.has(seq)) {
      visibleNotWritten++;
      fail(
        `seq ${seq}: answered ${outcome} (aborted, not written), a read_committed consumer sees it at ${places(seen.get(seq) ?? [])}`,
      );
    }
  }

  // 3. The ledger: one fate per seq, none UNKNOWN, ACKED ones seen there, the rest not seen.
  const tally: Record<string, number> = { ACKED: 0, FAILED: 0, NOT_SENT: 0, UNKNOWN: 0, VOID: 0 };
  for (let seq = 1; seq <= lastSeq; seq++) {
    const list = fates.get(seq) ?? [];
    if (list.length !== 1) {
      fail(
        `seq ${seq}: ${list.length} fates in the ledger (${list.map((f) => f.status).join(',')})`,
      );
      continue;
    }
    const fate = list[0] as LedgerFate;
    tally[fate.status] = (tally[fate.status] ?? 0) + 1;
    if (fate.status === 'ACKED' && !visibleAt(seq, fate.partition, fate.offset)) {
      lost.add(seq);
      fail(
        `seq ${seq}: ledger ACKED at ${fate.partition}:${fate.offset}, which a read_committed consumer does not see there`,
      );
    }
    if (NOT_WRITTEN.includes(fate.status) && seen.has(seq)) {
      visibleNotWritten++;
      fail(`seq ${seq}: ledger ${fate.status}, a read_committed consumer sees it`);
    }
    if (finalAnswer.get(seq)?.outcome === 'ACKED' && fate.status !== 'ACKED')
      fail(`seq ${seq}: answered ACKED, the ledger says ${fate.status}`);
  }
  if ((tally.UNKNOWN ?? 0) > 0)
    fail(`${tally.UNKNOWN} seq(s) still UNKNOWN in the ledger at the end`);

  // 4. UNKNOWN past the bound: an answer left UNKNOWN (no later attempt settled it) must be
  // definite when looked up after max(its answer, the last heal) + transaction timeout + deadline.
  const heals = evidence.faults.filter((f) => f.phase === 'heal' && f.at !== undefined);
  const lastHeal = Math.max(0, ...heals.map((f) => Date.parse(f.at as string)));
  const looked = new Map<number, TxnLookup>();
  for (const lookup of evidence.lookups) looked.set(lookup.seq, lookup); // the latest counts
  let unknownPastBound = 0;
  for (const [seq, at] of unknownAt) {
    const bound = Math.max(at, lastHeal) + boundMs;
    const lookup = looked.get(seq);
    const said = lookup?.body.records?.find((r) => r.seq === seq);
    const lookedAt = lookup?.at === undefined ? Number.NaN : Date.parse(lookup.at);
    if (lookup === undefined || said === undefined || !(lookedAt >= bound)) {
      unknownPastBound++;
      fail(
        `seq ${seq}: answered UNKNOWN at ${new Date(at).toISOString()}, not looked up after the bound ${new Date(bound).toISOString()} (${lookup === undefined ? 'never' : `status ${lookup.status} at ${lookup.at}`})`,
      );
      continue;
    }
    if (said.outcome === 'UNKNOWN') {
      unknownPastBound++;
      fail(
        `seq ${seq}: still UNKNOWN at ${lookup.at}, ${lookedAt - bound} ms past the bound (answered UNKNOWN at ${new Date(at).toISOString()}, last heal ${new Date(lastHeal).toISOString()}, bound ${boundMs} ms)`,
      );
    } else if (said.outcome === 'ACKED' && !visibleAt(seq, said.partition_id, said.offset)) {
      lost.add(seq);
      fail(`seq ${seq}: looked up ACKED at ${said.partition_id}:${said.offset}, not seen there`);
    } else if (said.outcome !== 'ACKED' && seen.has(seq)) {
      visibleNotWritten++;
      fail(`seq ${seq}: looked up ${said.outcome}, a read_committed consumer sees it`);
    }
  }

  if ((evidence.openAtEnd ?? 0) > 0)
    fail(`${evidence.openAtEnd} record(s) in a transaction still open when the topic was read`);

  const final = evidence.audits.filter((a) => a.label === 'final').at(-1);
  if (!final?.report?.complete)
    fail(`the final audit of ${stream} did not complete: ${final?.error ?? 'no report'}`);

  const counts = {
    requests: new Set(evidence.answers.map((a) => a.request)).size,
    attempts: evidence.answers.length,
    seqs: lastSeq,
    ...tally,
    readCommitted: committed.length,
    readUncommitted: evidence.uncommittedCount,
    openAtEnd: evidence.openAtEnd ?? 0,
    kafkajsShownAborted: evidence.kafkajsShownAborted ?? 0,
    faults: evidence.faults.filter((f) => f.phase === 'inject').length,
    readCommittedDuplicates,
    lost: lost.size,
    visibleNotWritten,
    unknownLeft: unknownAt.size,
    unknownPastBound,
    boundMs,
    lookups: evidence.lookups.length,
  };
  const ok = failures.length === 0;
  const lastLine = `chaos txn checker seed=${evidence.seed} ${ok ? 'PASS' : `FAIL(${failures.length})`} ${Object.entries(
    counts,
  )
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}`;
  return { ok, failures, counts, lastLine };
}
