import type { LedgerBlock } from '../publish/ports.js';
import type { RecordOutcome } from '../shared/outcomes.js';
import type { AuditPorts, AuditRequest, ScannedRecord } from './ports.js';
import { SeqRanges } from './seq-ranges.js';
import type { AuditFindings, StreamAudit } from './stream-audit.js';
import type { Placement, RecentRecords, StreamLog, TopicLog } from './topic-log.js';

// Where the audit finds the records it names: UNKNOWN outcomes settled from the copies the log
// holds, and copies of named seqs read again where an earlier run passed them.

/** Where this run knows a copy of `seq` to be: a placement it names, or where it found it. */
export const whereLanded = (log: StreamLog, seq: number): Placement | undefined =>
  log.placements.get(seq)?.[0] ?? log.landed.get(seq);

/**
 * Rewrites a block's UNKNOWN outcomes the log has settled. Every landed one is looked up in the
 * stream's log state, not in the findings, which describe at most MAX_PLACED of them.
 */
export function settle(
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
export function identity(
  headers: ScannedRecord['headers'],
): { stream: string; seq: number } | undefined {
  const stream = headers['tally.stream'];
  const seq = seqOf(headers);
  return stream !== undefined && seq !== undefined ? { stream, seq } : undefined;
}

/** The seq a record's `tally.seq` header carries (a safe integer ≥ 1), if any. */
export function seqOf(headers: ScannedRecord['headers']): number | undefined {
  const seq = Number(headers['tally.seq']);
  return Number.isSafeInteger(seq) && seq >= 1 ? seq : undefined;
}

export function unplacedUnknowns(blocks: readonly LedgerBlock[], log: StreamLog): SeqRanges {
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
export async function placeMissing(
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
