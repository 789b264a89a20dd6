import { describe, expect, it } from 'vitest';
import type { RecordOutcome } from '../../functions/core/outcomes.js';
import { PlacementRuns } from '../../functions/core/placement-runs.js';
import type { LedgerBlock } from '../../functions/core/publish-ports.js';
import { StreamAudit } from '../../functions/core/stream-audit.js';

const acked = (partition: number, offset: number): RecordOutcome => ({
  status: 'ACKED',
  partition,
  offset: String(offset),
});
const unknown: RecordOutcome = { status: 'UNKNOWN', message: 'no answer' };
const block = (firstSeq: number, outcomes: RecordOutcome[]): LedgerBlock => ({
  stream: 's',
  firstSeq,
  topic: 't',
  session: 's-1',
  idempotencyKey: undefined,
  outcomes,
});

/** Ledger seqs 1..n ACKED at offsets 0..n-1 of partition 0, and the same in the log. */
function clean(n: number): StreamAudit {
  const audit = new StreamAudit('s');
  audit.addLedgerBlock(
    block(
      1,
      Array.from({ length: n }, (_, i) => acked(0, i)),
    ),
  );
  for (let i = 0; i < n; i++)
    audit.addLogEntry({ seq: i + 1, partition: 0, offset: i, session: 's-1' });
  return audit;
}

describe('stream audit', () => {
  it('finds nothing when ledger, log and receipts agree', () => {
    const audit = clean(5);
    audit.addReceipts('billing', [[1, 5]]);
    expect(audit.findings()).toEqual({
      stream: 's',
      produced: 5,
      inLog: 5,
      processed: { billing: 5 },
      producerDuplicates: [],
      consumerDuplicates: [],
      lost: [],
      pending: [],
      unknownLanded: [],
      unknownAbsent: [],
    });
  });

  it('names both offsets and sessions of a producer-side duplicate', () => {
    const audit = clean(4);
    audit.addLogEntry({ seq: 3, partition: 0, offset: 4, session: 's-2' });
    expect(audit.findings().producerDuplicates).toEqual([
      {
        seq: 3,
        copies: [
          { partition: 0, offset: 2, session: 's-1' },
          { partition: 0, offset: 4, session: 's-2' },
        ],
      },
    ]);
  });

  it('calls a seq processed twice a consumer-side duplicate only where the log holds it once', () => {
    const audit = clean(5);
    audit.addLogEntry({ seq: 3, partition: 1, offset: 0, session: 's-2' }); // a producer duplicate
    audit.addReceipts('billing', [
      [1, 5],
      [2, 3],
    ]);
    expect(audit.findings().consumerDuplicates).toEqual([
      { group: 'billing', from: 2, to: 2, times: 2 },
    ]);
  });

  it('reports ACKED seqs missing from the log as lost, and unprocessed ones as pending', () => {
    const audit = new StreamAudit('s');
    audit.addLedgerBlock(block(1, [acked(0, 0), acked(0, 1), acked(0, 2), acked(0, 3)]));
    for (const seq of [1, 2, 4])
      audit.addLogEntry({ seq, partition: 0, offset: seq - 1, session: 's-1' });
    audit.addReceipts('billing', [[1, 1]]);
    const findings = audit.findings();
    expect(findings.lost).toEqual([{ from: 3, to: 3 }]);
    expect(findings.pending).toEqual([
      { group: 'billing', from: 2, to: 2 },
      { group: 'billing', from: 4, to: 4 },
    ]);
  });

  it('resolves UNKNOWN outcomes both ways: landed (with where) or absent', () => {
    const audit = new StreamAudit('s');
    audit.addLedgerBlock(block(1, [acked(0, 0), unknown, unknown]));
    audit.addLogEntry({ seq: 1, partition: 0, offset: 0, session: 's-1' });
    audit.addLogEntry({ seq: 2, partition: 0, offset: 1, session: 's-1' });
    const findings = audit.findings();
    expect(findings.unknownLanded).toEqual([{ seq: 2, partition: 0, offset: 1 }]);
    expect(findings.unknownAbsent).toEqual([[3, 3]]);
    expect(findings.produced).toBe(3);
  });

  it('keeps one placement run for a million consecutive records', () => {
    const runs = new PlacementRuns();
    for (let i = 0; i < 1_000_000; i++)
      runs.add(i + 1, { partition: 0, offset: i, session: 's-1' });
    expect(runs.runCount).toBe(1);
    expect(runs.placementsOf(500_000)).toEqual([{ partition: 0, offset: 499_999, session: 's-1' }]);
  });
});
