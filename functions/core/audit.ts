import { foldOld, saveBounded } from './audit-fold.js';
import { type SeqFateFigures, type SeqFatePorts, SeqFates } from './audit-holes.js';
import { DEFAULT_RETENTION_MS, newest, REPORT_ROWS } from './audit-retention.js';
import {
  bucketOf,
  type CheckpointJson,
  type Placement,
  RecentRecords,
  type StreamLog,
  TopicLog,
} from './audit-state.js';
import type { RecordOutcome } from './outcomes.js';
import type { LedgerBlock } from './publish-ports.js';
import type { BucketCount } from './receipts-input.js';
import { type SeqRange, SeqRanges } from './seq-ranges.js';
import { type AuditFindings, type BucketRow, StreamAudit } from './stream-audit.js';

// An audit of one topic. It resumes reading the log where its checkpoint says the last run
// stopped, stops itself at its deadline (saving where it got to), then compares per stream what
// the log holds so far with the ledger and the receipts of the given groups, and settles UNKNOWN
// outcomes in the ledger.

export interface ScannedRecord {
  readonly partition: number;
  readonly offset: number;
  /** The record's timestamp, ms since the epoch. */
  readonly timestamp: number;
  /** The `tally.*` header values as text (the first value of a repeated header). */
  readonly headers: Readonly<Record<string, string | undefined>>;
}

export interface ScanRequest {
  /** Partition → first offset to read; a partition not named is read from its log start. */
  readonly from?: ReadonlyMap<number, number>;
  /**
   * Partition → offset to stop before; default: the high watermarks when the scan starts.
   * With `until`, partitions it does not name are not read at all.
   */
  readonly until?: ReadonlyMap<number, number>;
  /** The scan stops between batches at this time (ms since the epoch) and reports where. */
  readonly deadlineAt: number;
}

export interface ScanResult {
  readonly scanned: number;
  /** Partition → next offset to read (where this scan stopped, or its end). */
  readonly next: ReadonlyMap<number, number>;
  /** Partition → log start offset when the scan started. */
  readonly logStart: ReadonlyMap<number, number>;
  /** Every partition was read to its end before the deadline. */
  readonly complete: boolean;
}

export interface AuditPorts {
  readonly ledger: {
    forEachBlock(stream: string, onBlock: (block: LedgerBlock) => void): Promise<void>;
    /**
     * The blocks of a stream written or rewritten at or after `since` (ms since the epoch), in
     * any order, possibly with some older ones. Without it, every run reads the whole ledger.
     */
    forEachChangedBlock?(
      stream: string,
      since: number,
      onBlock: (block: LedgerBlock) => void,
    ): Promise<void>;
    find(stream: string, seq: number): Promise<LedgerBlock | undefined>;
    write(block: LedgerBlock): Promise<void>;
  };
  readonly log: {
    scan(
      topic: string,
      request: ScanRequest,
      onRecord: (record: ScannedRecord) => void,
    ): Promise<ScanResult>;
  };
  readonly receipts: {
    forEachBatch(
      group: string,
      stream: string,
      onBatch: (batch: { readonly seqs: readonly SeqRange[] }) => void,
    ): Promise<void>;
    /** Count-only receipts (Chaperone-style) a group posted for a topic. */
    counts(group: string, topic: string): Promise<BucketCount[]>;
  };
  readonly checkpoints: {
    load(topic: string): Promise<{ state: CheckpointJson; version: number } | undefined>;
    /** Saves only if the stored version is still `version` (0: none yet); else ConflictError. */
    save(topic: string, state: CheckpointJson, version: number): Promise<void>;
  };
  /** The streams' counters, to find seqs with no fate and void the old ones (audit-holes.ts). */
  readonly seqFates?: SeqFatePorts;
  /** Reconcile's REWIND/LOST events of a group on a topic, to explain consumer-side duplicates. */
  readonly reconcile?: { events(group: string, topic: string): Promise<ReconcileEvent[]> };
  /** Now, in ms since the epoch (default Date.now). */
  readonly clock?: () => number;
}

export interface ReconcileEvent {
  readonly at: string;
  readonly partition: number;
  readonly status: 'REWIND' | 'LOST';
  readonly detail: object | undefined;
}

type ConsumerDuplicate = AuditFindings['consumerDuplicates'][number];

/**
 * Findings, with each consumer-side duplicate linked to the reconcile events that explain it.
 * Each list names its newest LIST_CAP items; `leftOff` counts the older ones per list (their
 * totals are in the rows).
 */
export type LinkedFindings = Omit<AuditFindings, 'consumerDuplicates'> & {
  readonly consumerDuplicates: ReadonlyArray<
    ConsumerDuplicate & { readonly reconcileEvents: readonly ReconcileEvent[] }
  >;
  readonly buckets: readonly BucketRow[];
  /** Records read after their seq was folded: a late duplicate or a late first copy. */
  readonly belowFloor?: number;
  readonly leftOff?: Readonly<Record<string, number>>;
} & Partial<SeqFateFigures>;

export interface AuditRequest {
  readonly topic: string;
  readonly groups: readonly string[];
  /** Reading the log stops here (ms since the epoch); the rest of the run needs time after. */
  readonly scanDeadlineAt: number;
  /**
   * An UNKNOWN absent from the log is settled as not written only when its block is older than
   * this: a request still in flight must not be judged.
   */
  readonly horizonMs: number;
  readonly bucketMs: number;
  /** Streams to compare even if none of their records is in the log (default: the topic's name). */
  readonly streams?: readonly string[];
  /**
   * Detail older than this (ms) is folded into one row of totals per stream and for the topic
   * (default DEFAULT_RETENTION_MS, 7 days): what bounds the checkpoint.
   */
  readonly retentionMs?: number;
  /**
   * How long a ledger write may take to show among the changed blocks after its write time
   * (in-flight puts, index lag, clocks): each run reads again the blocks written this long
   * before the previous one started (default LEDGER_LAG_MS).
   */
  readonly ledgerLagMs?: number;
}

/** See AuditRequest.ledgerLagMs: longer than a publish invocation (29 s) and its DynamoDB calls (3 s). */
export const LEDGER_LAG_MS = 60_000;

export interface AuditReport {
  readonly topic: string;
  readonly at: string;
  /** The log was read to the high watermarks of this run; otherwise the next run continues. */
  readonly complete: boolean;
  /** Records read by this run. */
  readonly scanned: number;
  /** Records read by every run so far. */
  readonly scannedTotal: number;
  /** Records in the topic without `tally.*` headers (not published through Tally). */
  readonly untracked: number;
  /** Records removed from the log (retention, deleteRecords) before any audit read them. */
  readonly unread: number;
  /** Where the next run starts reading, per partition. */
  readonly checkpoint: ReadonlyArray<{ readonly partition: number; readonly next: number }>;
  readonly streams: readonly LinkedFindings[];
  /** Per time bucket: records of any kind in the log, and count-only receipts per group. */
  readonly topicBuckets: ReadonlyArray<{
    readonly start: string;
    /** On a first row summing every bucket from `start` to here (folded or not listed). */
    readonly until?: string;
    readonly inLog: number;
    readonly counted: Readonly<Record<string, number>>;
  }>;
  /** UNKNOWN outcomes this run settled in the ledger. */
  readonly settled: { readonly landed: number; readonly notWritten: number };
  /** Wall time per phase (ledger, scan, receipts, lookup, compare, checkpoint), ms. */
  readonly timingsMs?: Readonly<Record<string, number>>;
  /** Detail before `foldedBefore` is only in totals; `overflow` says why a save folded it all. */
  readonly retention?: {
    readonly horizonMs: number;
    readonly foldedBefore?: string;
    readonly overflow?: string;
  };
}

/** Where this run knows a copy of `seq` to be: a placement it names, or where it found it. */
const whereLanded = (log: StreamLog, seq: number): Placement | undefined =>
  log.placements.get(seq)?.[0] ?? log.landed.get(seq);

/**
 * Rewrites a block's UNKNOWN outcomes the log has settled. Every landed one is looked up in the
 * stream's log state, not in the findings, which describe at most MAX_PLACED of them.
 */
function settle(
  block: LedgerBlock,
  log: StreamLog,
  findings: AuditFindings,
  horizonAt: number,
): LedgerBlock | undefined {
  const absent = (seq: number) =>
    findings.unknownAbsent.some(([from, to]) => seq >= from && seq <= to);
  let changed = false;
  const outcomes = block.outcomes.map((outcome, i): RecordOutcome => {
    if (outcome.status !== 'UNKNOWN') return outcome;
    const seq = block.firstSeq + i;
    const found = whereLanded(log, seq);
    if (found) {
      changed = true;
      return { status: 'ACKED', partition: found.partition, offset: String(found.offset) };
    }
    if (absent(seq) && block.writtenAt !== undefined && block.writtenAt < horizonAt) {
      changed = true;
      return { status: 'NOT_SENT', message: 'not in the log when the audit read it: not written' };
    }
    return outcome;
  });
  return changed ? { ...block, outcomes } : undefined;
}

/** The stream and seq a record carries in its `tally.*` headers, if it has them. */
function identity(headers: ScannedRecord['headers']): { stream: string; seq: number } | undefined {
  const stream = headers['tally.stream'];
  const seq = Number(headers['tally.seq']);
  return stream !== undefined && Number.isSafeInteger(seq) && seq >= 1
    ? { stream, seq }
    : undefined;
}

export function createAuditor(ports: AuditPorts) {
  const clock = ports.clock ?? Date.now;
  return {
    async run(request: AuditRequest): Promise<AuditReport> {
      const startedAt = clock();
      const at = new Date(startedAt).toISOString();
      const { topic, bucketMs } = request;
      const saved = await ports.checkpoints.load(topic);
      const state = new TopicLog(topic, saved?.state);
      const audits = new Map<string, StreamAudit>();
      const unknownBlocks = new Map<string, LedgerBlock[]>();
      const fates = new SeqFates(startedAt - request.horizonMs);
      const auditOf = (stream: string) => {
        let audit = audits.get(stream);
        if (audit === undefined) {
          audit = new StreamAudit(stream, state.stream(stream), {
            bucketMs,
            judgeBefore: startedAt,
          });
          audits.set(stream, audit);
        }
        return audit;
      };
      const readLedger = async (stream: string) => {
        const audit = auditOf(stream);
        const view = state.stream(stream).ledger;
        const keep = new Map<number, LedgerBlock>();
        const read = new Set<number>();
        const onBlock = (block: LedgerBlock) => {
          read.add(block.firstSeq);
          const rewritten = view.isRewrite(block);
          // Every block counts for the seqs' fates (holes are seqs no block holds), folded or not.
          view.addFates(block);
          if (block.topic !== topic) return;
          if (audit.replaceLedgerBlock(block, rewritten)) {
            keep.set(block.firstSeq, block);
            view.unknownBlocks.add(block.firstSeq);
          } else view.unknownBlocks.delete(block.firstSeq);
        };
        const changed = ports.ledger.forEachChangedBlock?.bind(ports.ledger);
        if (changed && view.since !== undefined) {
          await changed(stream, view.since, onBlock);
          // Blocks still UNKNOWN that did not change are needed whole to settle them.
          for (const firstSeq of [...view.unknownBlocks]) {
            if (read.has(firstSeq)) continue;
            const block = await ports.ledger.find(stream, firstSeq);
            if (block?.firstSeq === firstSeq) onBlock(block);
            else view.unknownBlocks.delete(firstSeq);
          }
        } else {
          view.clear();
          await ports.ledger.forEachBlock(stream, onBlock);
        }
        if (changed) view.since = startedAt - (request.ledgerLagMs ?? LEDGER_LAG_MS);
        fates.addView(stream, view);
        unknownBlocks.set(
          stream,
          [...keep.values()].sort((a, b) => a.firstSeq - b.firstSeq),
        );
      };

      // The ledger of streams already known first, so the scan can place their UNKNOWN records.
      const known = new Set([...state.streams.keys(), ...(request.streams ?? []), topic]);
      const timings = new Timings();
      const recent = new RecentRecords();
      for (const stream of known) await timings.time('ledger', () => readLedger(stream));

      const scan = await timings.time('scan', () =>
        ports.log.scan(
          topic,
          { from: state.next, deadlineAt: request.scanDeadlineAt },
          (record) => {
            state.countInBucket(record.timestamp, bucketMs);
            const id = identity(record.headers);
            if (id === undefined) {
              state.untracked++;
              return;
            }
            const audit = audits.get(id.stream);
            const log = state.stream(id.stream);
            // Built field by field: spreading the record costs more than the rest of this callback.
            const entry = {
              seq: id.seq,
              partition: record.partition,
              offset: record.offset,
              timestamp: record.timestamp,
              session: record.headers['tally.session'] ?? '',
            };
            const before = log.add(entry, bucketMs, audit?.isUnknown(id.seq) ?? false);
            // Earlier copies are looked for only for a repeat that is described (at most
            // MAX_PLACED are): each look reads the whole window.
            if (before > 0 && log.placements.has(id.seq))
              for (const copy of recent.find(id.stream, id.seq)) log.place(id.seq, copy);
            recent.push(id.stream, id.seq, entry);
          },
        ),
      );
      for (const [partition, low] of scan.logStart) {
        const from = state.next.get(partition);
        if (from !== undefined && low > from) state.unread += low - from;
      }
      for (const [partition, next] of scan.next) state.next.set(partition, next);
      state.scanned += scan.scanned;

      for (const stream of state.streams.keys()) {
        if (!audits.has(stream)) await timings.time('ledger', () => readLedger(stream));
      }
      for (const [stream, audit] of audits) {
        for (const group of request.groups) {
          await timings.time('receipts', () =>
            ports.receipts.forEachBatch(group, stream, (batch) =>
              audit.addReceipts(group, batch.seqs),
            ),
          );
        }
      }
      await timings.time('lookup', () =>
        placeMissing(ports, request, state, audits, recent, unknownBlocks, clock),
      );

      const fateFigures =
        ports.seqFates &&
        (await fates.settle(ports.seqFates, topic, audits.keys(), {
          complete: scan.complete,
          seen: (stream, seq) => {
            const log = state.stream(stream);
            return seq <= log.floor ? undefined : log.log.timesOf(seq) > 0;
          },
        }));
      const streams: LinkedFindings[] = [];
      let landed = 0;
      let notWritten = 0;
      const compared = performance.now();
      const horizonAt = startedAt - request.horizonMs;
      for (const [stream, audit] of audits) {
        const findings = audit.findings(scan.complete);
        for (const block of unknownBlocks.get(stream) ?? []) {
          const settled = settle(block, state.stream(stream), findings, horizonAt);
          if (!settled) continue;
          await ports.ledger.write(settled);
          block.outcomes.forEach((before, i) => {
            const after = settled.outcomes[i];
            if (before.status !== 'UNKNOWN' || after === undefined) return;
            if (after.status === 'ACKED') landed++;
            if (after.status === 'NOT_SENT') notWritten++;
          });
        }
        const rows = audit.buckets(scan.complete, REPORT_ROWS);
        const linked = await link(ports, topic, stream, findings, rows);
        const { belowFloor } = state.stream(stream);
        streams.push({
          ...linked,
          ...(belowFloor > 0 && { belowFloor }),
          ...fateFigures?.get(stream),
        });
      }
      timings.add('compare', performance.now() - compared);
      const retentionMs = request.retentionMs ?? DEFAULT_RETENTION_MS;
      const folding = { bucketMs, complete: scan.complete };
      foldOld(state, audits, { ...folding, cutoff: startedAt - retentionMs });
      const save = (json: CheckpointJson) =>
        ports.checkpoints.save(topic, json, saved?.version ?? 0);
      const overflow = await timings.time('checkpoint', () =>
        saveBounded(save, state, audits, folding),
      );

      return {
        topic,
        at,
        complete: scan.complete,
        scanned: scan.scanned,
        scannedTotal: state.scanned,
        untracked: state.untracked,
        unread: state.unread,
        checkpoint: [...state.next].map(([partition, next]) => ({ partition, next })),
        streams,
        topicBuckets: await topicBuckets(ports, request, state),
        settled: { landed, notWritten },
        timingsMs: timings.toJSON(),
        retention: {
          horizonMs: retentionMs,
          ...(state.foldedBefore > 0
            ? { foldedBefore: new Date(state.foldedBefore).toISOString() }
            : {}),
          ...(overflow === undefined ? {} : { overflow }),
        },
      };
    },
  };
}

/** Wall time per phase of a run, in ms. */
class Timings {
  readonly #ms: Record<string, number> = {};

  add(phase: string, ms: number): void {
    this.#ms[phase] = (this.#ms[phase] ?? 0) + ms;
  }

  async time<T>(phase: string, work: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await work();
    } finally {
      this.add(phase, performance.now() - start);
    }
  }

  toJSON(): Record<string, number> {
    return Object.fromEntries(Object.entries(this.#ms).map(([k, v]) => [k, Math.round(v)]));
  }
}

/** UNKNOWN outcomes of `blocks` the log holds a copy of, where this run has not found it yet. */
function unplacedUnknowns(blocks: readonly LedgerBlock[], log: StreamLog): SeqRanges {
  const seqs = new SeqRanges();
  for (const block of blocks) {
    block.outcomes.forEach((outcome, i) => {
      const seq = block.firstSeq + i;
      if (outcome.status !== 'UNKNOWN' || log.log.timesOf(seq) === 0) return;
      if (whereLanded(log, seq) === undefined) seqs.add(seq);
    });
  }
  return seqs;
}

/**
 * Finds the copies findings name but the scan did not place (an earlier copy read before it was
 * known to repeat; an UNKNOWN record read before its stream's ledger, or by an earlier run): from
 * the records the scan passed last, else by re-reading the offsets where those streams' records
 * lie, until the scan deadline. Every landed UNKNOWN outcome is looked for, since each is settled.
 */
async function placeMissing(
  ports: AuditPorts,
  request: AuditRequest,
  state: TopicLog,
  audits: ReadonlyMap<string, StreamAudit>,
  recent: RecentRecords,
  unknownBlocks: ReadonlyMap<string, readonly LedgerBlock[]>,
  clock: () => number,
): Promise<void> {
  const missing = new Map<string, SeqRanges>();
  for (const [stream, audit] of audits) {
    const log = state.stream(stream);
    const blocks = unknownBlocks.get(stream) ?? [];
    // The records the scan passed last are still at hand: place what they can first.
    for (const [seq, [first]] of recent.copiesOf(stream, unplacedUnknowns(blocks, log)))
      if (first) log.landed.set(seq, first);
    const described = audit.missingPlacements();
    const copies = recent.copiesOf(stream, described);
    for (const [from, to] of described.ranges()) {
      for (let seq = from; seq <= to; seq++)
        for (const copy of copies.get(seq) ?? []) log.place(seq, copy);
    }
    // Re-read for the rest, except single copies already found that only the description
    // (full at MAX_PLACED) lacks.
    const seqs = unplacedUnknowns(blocks, log);
    for (const [from, to] of audit.missingPlacements().ranges()) {
      for (let seq = from; seq <= to; seq++)
        if (log.log.timesOf(seq) > 1 || !log.landed.has(seq)) seqs.add(seq);
    }
    if (!seqs.isEmpty) missing.set(stream, seqs);
  }
  if (missing.size === 0 || clock() >= request.scanDeadlineAt) return;
  const from = new Map<number, number>();
  const until = new Map<number, number>();
  for (const stream of missing.keys()) {
    for (const [partition, [first, last]] of state.stream(stream).spans) {
      from.set(partition, Math.min(from.get(partition) ?? first, first));
      until.set(partition, Math.max(until.get(partition) ?? last + 1, last + 1));
    }
  }
  await ports.log.scan(request.topic, { from, until, deadlineAt: request.scanDeadlineAt }, (r) => {
    const id = identity(r.headers);
    if (id === undefined || !missing.get(id.stream)?.has(id.seq)) return;
    const log = state.stream(id.stream);
    const copy = {
      partition: r.partition,
      offset: r.offset,
      session: r.headers['tally.session'] ?? '',
    };
    if (audits.get(id.stream)?.isUnknown(id.seq) && !log.landed.has(id.seq))
      log.landed.set(id.seq, copy);
    log.place(id.seq, copy);
  });
}

/** The findings' lists cut to their newest LIST_CAP items, and how many each left off. */
function capped(findings: AuditFindings): {
  findings: AuditFindings;
  leftOff?: Record<string, number>;
} {
  const leftOff: Record<string, number> = {};
  const cut = <T>(name: string, items: readonly T[]): T[] => {
    const { kept, leftOff: n } = newest(items);
    if (n > 0) leftOff[name] = n;
    return kept;
  };
  const cutFindings: AuditFindings = {
    ...findings,
    producerDuplicates: cut('producerDuplicates', findings.producerDuplicates),
    consumerDuplicates: cut('consumerDuplicates', findings.consumerDuplicates),
    lost: cut('lost', findings.lost),
    pending: cut('pending', findings.pending),
    unknownLanded: cut('unknownLanded', findings.unknownLanded),
    unknownAbsent: cut('unknownAbsent', findings.unknownAbsent),
  };
  return Object.keys(leftOff).length > 0
    ? { findings: cutFindings, leftOff }
    : { findings: cutFindings };
}

/** Names where lost records were acknowledged and links redeliveries to reconcile's events. */
async function link(
  ports: AuditPorts,
  topic: string,
  stream: string,
  uncapped: AuditFindings,
  buckets: BucketRow[],
): Promise<LinkedFindings> {
  const { findings, leftOff } = capped(uncapped);
  const lost: Array<LinkedFindings['lost'][number]> = [];
  for (const range of findings.lost) {
    const block: LedgerBlock | undefined =
      lost.length < 100 ? await ports.ledger.find(stream, range.from) : undefined;
    const outcome: RecordOutcome | undefined = block?.outcomes[range.from - block.firstSeq];
    lost.push(
      outcome?.status === 'ACKED'
        ? { ...range, acked: { partition: outcome.partition, offset: Number(outcome.offset) } }
        : range,
    );
  }
  const events = new Map<string, ReconcileEvent[]>();
  for (const group of new Set(findings.consumerDuplicates.map((d) => d.group))) {
    events.set(group, (await ports.reconcile?.events(group, topic)) ?? []);
  }
  return {
    ...findings,
    lost,
    consumerDuplicates: findings.consumerDuplicates.map((d) => ({
      ...d,
      reconcileEvents: events.get(d.group) ?? [],
    })),
    buckets,
    ...(leftOff ? { leftOff } : {}),
  };
}

/**
 * Per time bucket, the topic's records in the log and count-only receipts per group: the newest
 * REPORT_ROWS buckets one by one, and a first row summing older ones (folded or not listed).
 */
async function topicBuckets(
  ports: AuditPorts,
  request: AuditRequest,
  state: TopicLog,
): Promise<AuditReport['topicBuckets']> {
  const counted = new Map<number, Record<string, number>>();
  for (const group of request.groups) {
    for (const bucket of await ports.receipts.counts(group, request.topic)) {
      const start = bucketOf(Date.parse(bucket.start), request.bucketMs);
      const row = counted.get(start) ?? {};
      row[group] = (row[group] ?? 0) + bucket.count;
      counted.set(start, row);
    }
  }
  const starts = [...new Set([...state.topicBuckets.keys(), ...counted.keys()])].sort(
    (a, b) => a - b,
  );
  const rowOf = (start: number) => ({
    inLog: start < state.foldedBefore ? 0 : (state.topicBuckets.get(start) ?? 0),
    counted: counted.get(start) ?? {},
  });
  const { kept, leftOff } = newest(starts, REPORT_ROWS);
  const rows: Array<AuditReport['topicBuckets'][number]> = kept.map((start) => ({
    start: new Date(start).toISOString(),
    ...rowOf(start),
  }));
  const unlisted = starts.slice(0, leftOff);
  if (unlisted.length === 0 && state.olderInLog === 0) return rows;
  const older = { inLog: state.olderInLog, counted: {} as Record<string, number> };
  for (const start of unlisted) {
    const row = rowOf(start);
    older.inLog += row.inLog;
    for (const [group, n] of Object.entries(row.counted))
      older.counted[group] = (older.counted[group] ?? 0) + n;
  }
  const since = Math.min(
    state.foldedSince ?? Number.POSITIVE_INFINITY,
    unlisted[0] ?? Number.POSITIVE_INFINITY,
  );
  const until = Math.max(
    state.foldedBefore,
    (unlisted[unlisted.length - 1] ?? 0) + request.bucketMs,
  );
  return [
    { start: new Date(since).toISOString(), until: new Date(until).toISOString(), ...older },
    ...rows,
  ];
}
