import type { AuditPorts } from './ports.js';
import { emptyCounters } from './receipts-view.js';
import type { StreamAudit } from './stream-audit.js';
import type { StreamLog } from './topic-log.js';

/**
 * Adds a group's receipts for a stream to its audit. With a receipts port that reads by write
 * time, only those written after the checkpoint's `upTo` are read, on top of what it folded;
 * those written up to `upTo` now (the run's start less the lag) are folded in turn, the later ones
 * counted in this run only (they are read again next run, with any that land late beside them).
 */
export async function readReceipts(
  receipts: AuditPorts['receipts'],
  audit: StreamAudit,
  log: StreamLog,
  group: string,
  upTo: number,
): Promise<void> {
  const since = receipts.forEachBatchSince?.bind(receipts);
  if (since === undefined) {
    await receipts.forEachBatch(group, audit.stream, (batch) =>
      audit.addReceipts(group, batch.seqs, batch.suppressed),
    );
    return;
  }
  const held = log.receipts.get(group);
  if (held) audit.seedReceipts(group, held.counters);
  const folded = held?.counters ?? emptyCounters();
  const foldUpTo = Math.max(upTo, held?.upTo ?? Number.NEGATIVE_INFINITY);
  let any = held !== undefined;
  await since(group, audit.stream, held?.upTo, (batch, receivedAt) => {
    const fold = receivedAt <= foldUpTo;
    any ||= fold;
    audit.addReceipts(group, batch.seqs, batch.suppressed, fold ? folded : undefined);
  });
  // A group with no receipt folded yet is not held: it has no row of its own before its first.
  if (any) log.receipts.set(group, foldUpTo, folded);
}
