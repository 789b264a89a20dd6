import type { LedgerBlock } from '../publish/ports.js';
import { definiteBy, settleTxn, unsettledTxn } from '../publish/txn-settle.js';
import { Deadline } from '../shared/deadline.js';
import { foldOld, saveBounded } from './fold-old.js';
import { link, topicBuckets } from './links.js';
import { absorbSlices } from './merge-slices.js';
import { placeMissing, seqOf, settle } from './placing.js';
import type {
  AuditPorts,
  AuditReport,
  AuditRequest,
  LinkedFindings,
  ScannedRecord,
  SlicePorts,
} from './ports.js';
import { readCounts } from './read-counts.js';
import { readReceipts } from './read-receipts.js';
import { DEFAULT_RETENTION_MS, REPORT_ROWS } from './retention.js';
import { SeqFates } from './seq-fates.js';
import { StreamAudit } from './stream-audit.js';
import { type CheckpointJson, RecentRecords, type StreamLog, TopicLog } from './topic-log.js';

// An audit of one topic. It resumes reading the log where its checkpoint says the last run
// stopped, stops itself at its deadline (saving where it got to), then compares per stream what
// the log holds so far with the ledger and the receipts of the given groups, and settles UNKNOWN
// outcomes in the ledger.

/** See AuditRequest.ledgerLagMs: longer than a publish invocation (29 s) and its DynamoDB calls (3 s). */
export const LEDGER_LAG_MS = 60_000;

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
        const pending: LedgerBlock[] = [];
        const confirmVoid = ports.ledger.confirmVoid?.bind(ports.ledger);
        const record = (block: LedgerBlock) => {
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
        // A VOID range its audit left pending (stopped before looking for blocks inside) is
        // counted only as it stands once checked (adapters/dynamodb/ledger.ts, VOID ranges).
        const onBlock = (block: LedgerBlock) =>
          block.pending && confirmVoid ? pending.push(block) : record(block);
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
        for (const range of pending) {
          const kept = await (confirmVoid as NonNullable<typeof confirmVoid>)(range);
          const { pending: _, ...confirmed } = range;
          if (kept > 0) record({ ...confirmed, outcomes: range.outcomes.slice(0, kept) });
        }
        if (changed) view.since = startedAt - (request.ledgerLagMs ?? LEDGER_LAG_MS);
        fates.addView(stream, view);
        unknownBlocks.set(
          stream,
          [...keep.values()].sort((a, b) => a.firstSeq - b.firstSeq),
        );
      };

      // The ledger of streams already known is read while the scan connects, joins its group and
      // waits for its first fetch: the scan hands records over only once it is read, so it can
      // place their UNKNOWN records. (The two phases' timings overlap.)
      const known = new Set([...state.streams.keys(), ...(request.streams ?? []), topic]);
      const timings = new Timings();
      const recent = new RecentRecords();
      const knownLedger = timings.time('ledger', async () => {
        for (const stream of known) await readLedger(stream);
      });
      // Awaited below; a failure also stops the scan before it counts a record.
      knownLedger.catch(() => {});

      // A fan-out merge folds in what its children read instead of reading the log itself.
      const { fanOut } = request;
      const scan = fanOut
        ? await knownLedger.then(() =>
            timings.time('scan', () =>
              absorbSlices(slicesOf(ports), topic, state, saved?.version ?? 0, fanOut.slices),
            ),
          )
        : await timings.time('scan', () =>
            ports.log.scan(
              topic,
              { from: state.next, deadlineAt: request.scanDeadlineAt, after: knownLedger },
              recordReader(state, audits, recent, bucketMs),
            ),
          );
      await knownLedger;
      for (const [partition, low] of scan.logStart) {
        const from = state.next.get(partition);
        if (from !== undefined && low > from) state.unread += low - from;
      }
      for (const [partition, next] of scan.next) state.next.set(partition, next);
      state.scanned += scan.scanned;

      for (const stream of state.streams.keys()) {
        if (!audits.has(stream)) await timings.time('ledger', () => readLedger(stream));
      }
      // Receipts written by then are folded into the checkpoint; later ones may still be landing.
      const receiptsUpTo = startedAt - (request.ledgerLagMs ?? LEDGER_LAG_MS);
      for (const [stream, audit] of audits) {
        const log = state.stream(stream);
        log.receipts.keepOnly(request.groups);
        for (const group of request.groups) {
          await timings.time('receipts', () =>
            readReceipts(ports.receipts, audit, log, group, receiptsUpTo),
          );
        }
      }
      const countsRead = await timings.time('receipts', () =>
        readCounts(ports.receipts, state, request, receiptsUpTo),
      );
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
      const count = (block: LedgerBlock, settled: LedgerBlock) =>
        block.outcomes.forEach((before, i) => {
          const after = settled.outcomes[i];
          if (before.status !== 'UNKNOWN' || after === undefined) return;
          if (after.status === 'ACKED') landed++;
          if (after.status === 'NOT_SENT') notWritten++;
        });
      for (const [stream, audit] of audits) {
        const findings = audit.findings(scan.complete);
        for (const found of unknownBlocks.get(stream) ?? []) {
          // A transaction past its timeout: settled as a lookup would (its offsets read
          // read_committed), before the UNKNOWN rules; what it settles is counted with them.
          const txn = await settleOldTxn(ports, found, clock());
          if (txn !== undefined) {
            count(found, txn);
            continue;
          }
          const block = found;
          const settled = settle(block, state.stream(stream), findings, horizonAt);
          if (!settled) continue;
          // A retry may have reopened the block since it was read (its records in flight again):
          // the settling lands only over the version read, else the next run sees the new one.
          if ((await ports.ledger.write(settled, undefined, block.version)) === undefined) continue;
          count(block, settled);
        }
        const rows = audit.buckets(scan.complete, REPORT_ROWS);
        const linked = await link(ports, topic, stream, findings, rows);
        const { belowFloor, abortedCopies, aborted } = state.stream(stream);
        streams.push({
          ...linked,
          ...(belowFloor > 0 && { belowFloor }),
          ...(abortedCopies > 0 && { abortedCopies, aborted: [...aborted].reverse() }),
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
        topicBuckets: topicBuckets(request, state, state.counted.reported(countsRead)),
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

/**
 * What a scan does with each record: counts it in the topic's state (`audits` says which seqs
 * are UNKNOWN outcomes worth placing) and names the earlier copies of a repeat still in `recent`.
 * Consecutive records mostly share a stream: its state is looked up again only when it changes.
 */
export function recordReader(
  state: TopicLog,
  audits: ReadonlyMap<string, StreamAudit>,
  recent: RecentRecords,
  bucketMs: number,
): (record: ScannedRecord) => void {
  let lastStream: string | undefined;
  let log = undefined as unknown as StreamLog;
  let audit: StreamAudit | undefined;
  return (record) => {
    const { headers } = record;
    if (record.aborted) {
      // Never delivered to a read_committed consumer: no copy of its seq, no record of the topic.
      const stream = headers['tally.stream'];
      const seq = seqOf(headers);
      if (stream === undefined || seq === undefined) return;
      state.stream(stream).addAborted({
        seq,
        partition: record.partition,
        offset: record.offset,
        session: headers['tally.session'] ?? '',
      });
      return;
    }
    state.countInBucket(record.timestamp, bucketMs);
    const stream = headers['tally.stream'];
    const seq = seqOf(headers);
    if (stream === undefined || seq === undefined) {
      state.untracked++;
      return;
    }
    if (stream !== lastStream) {
      lastStream = stream;
      log = state.stream(stream);
      audit = audits.get(stream);
    }
    // Built field by field: spreading the record costs more than the rest of this callback.
    const entry = {
      seq,
      partition: record.partition,
      offset: record.offset,
      timestamp: record.timestamp,
      session: headers['tally.session'] ?? '',
    };
    const before = log.add(entry, bucketMs, audit?.isUnknown(seq) === true);
    // Earlier copies are looked for only for a repeat that is described (at most
    // MAX_PLACED are): each look reads the whole window.
    if (before > 0 && log.placements.has(seq))
      for (const copy of recent.find(stream, seq)) log.place(seq, copy);
    recent.push(stream, seq, entry);
  };
}

/** How long the audit gives one transaction's read_committed read. */
const TXN_READ_MS = 15_000;
/** Clock differences between publish containers and the audit allowed for (as leases do). */
const TXN_SKEW_MS = 2000;

/**
 * A SENDING or PREPARED block past its transaction's timeout, settled by a read_committed read
 * of its offsets (never a fence: its coordinator has ended it): the block written, or undefined
 * when it is no such block, not that old, or was not settled (a writer got there first, the
 * read did not finish: the next run tries again).
 */
async function settleOldTxn(
  ports: AuditPorts,
  block: LedgerBlock,
  now: number,
): Promise<LedgerBlock | undefined> {
  const txns = ports.transactions;
  if (txns === undefined || !unsettledTxn(block)) return undefined;
  const by = definiteBy(block, txns.transactionTimeoutMs);
  if (by === undefined || now < by + TXN_SKEW_MS) return undefined;
  try {
    const done = await settleTxn({ ledger: txns.ledger, transactions: txns.settler }, block, {
      fence: false,
      deadline: new Deadline(now + TXN_READ_MS),
    });
    return done.kind === 'settled' ? done.block : undefined;
  } catch {
    return undefined;
  }
}

function slicesOf(ports: AuditPorts): SlicePorts {
  if (ports.slices === undefined) throw new TypeError('a fan-out merge needs the slices port');
  return ports.slices;
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
