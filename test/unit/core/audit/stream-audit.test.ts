import { describe, expect, it } from 'vitest';
import { StreamAudit } from '../../../../functions/core/audit/stream-audit.js';
import {
  bucketOf,
  RecentRecords,
  StreamLog,
  TopicLog,
} from '../../../../functions/core/audit/topic-log.js';
import type { LedgerBlock } from '../../../../functions/core/publish/ports.js';
import type { RecordOutcome } from '../../../../functions/core/shared/outcomes.js';
import { bucketRow, noFindings } from '../../../helpers/audit-findings.js';

const MINUTE = 60_000;
const T0 = Date.parse('2026-11-29T10:00:00Z');

const acked = (partition: number, offset: number): RecordOutcome => ({
  status: 'ACKED',
  partition,
  offset: String(offset),
});
const unknown: RecordOutcome = { status: 'UNKNOWN', message: 'no answer' };
const block = (firstSeq: number, outcomes: RecordOutcome[], writtenAt = T0): LedgerBlock => ({
  stream: 's',
  firstSeq,
  topic: 't',
  session: 's-1',
  idempotencyKey: undefined,
  outcomes,
  writtenAt,
});

/** A stream's log and its audit, judged as of T0 + 1 h, in one-minute buckets. */
function setup() {
  const log = new StreamLog();
  const audit = new StreamAudit('s', log, { bucketMs: MINUTE, judgeBefore: T0 + 3_600_000 });
  const read = (seq: number, partition: number, offset: number, session = 's-1', at = T0) =>
    log.add({ seq, partition, offset, session, timestamp: at }, MINUTE, audit.isUnknown(seq));
  return { log, audit, read };
}

/** Ledger seqs 1..n ACKED at offsets 0..n-1 of partition 0, and the same in the log. */
function clean(n: number) {
  const s = setup();
  s.audit.addLedgerBlock(
    block(
      1,
      Array.from({ length: n }, (_, i) => acked(0, i)),
    ),
  );
  for (let i = 0; i < n; i++) s.read(i + 1, 0, i);
  return s;
}

describe('stream audit', () => {
  it('finds nothing when ledger, log and receipts agree', () => {
    const { audit } = clean(5);
    audit.addReceipts('billing', [[1, 5]]);
    expect(audit.findings(true)).toEqual({
      ...noFindings('s'),
      produced: 5,
      inLog: 5,
      processed: { billing: 5 },
    });
    expect(audit.missingPlacements().isEmpty).toBe(true);
  });

  it('names both copies of a producer-side duplicate once the earlier copy is placed', () => {
    const { audit, log, read } = clean(4);
    read(3, 0, 4, 's-2');
    // The first copy was read before seq 3 was known to repeat: a lookup must place it.
    expect(audit.missingPlacements().ranges()).toEqual([[3, 3]]);
    expect(audit.findings(true).producerDuplicates).toEqual([
      { seq: 3, times: 2, copies: [{ partition: 0, offset: 4, session: 's-2' }] },
    ]);
    log.place(3, { partition: 0, offset: 2, session: 's-1' });
    expect(audit.missingPlacements().isEmpty).toBe(true);
    expect(audit.findings(true).producerDuplicates).toEqual([
      {
        seq: 3,
        times: 2,
        copies: [
          { partition: 0, offset: 2, session: 's-1' },
          { partition: 0, offset: 4, session: 's-2' },
        ],
      },
    ]);
  });

  it('calls a seq processed twice a consumer-side duplicate only where the log holds it once', () => {
    const { audit, read } = clean(5);
    read(3, 1, 0, 's-2'); // a producer duplicate
    audit.addReceipts('billing', [
      [1, 5],
      [2, 3],
    ]);
    expect(audit.findings(true).consumerDuplicates).toEqual([
      { group: 'billing', from: 2, to: 2, times: 2 },
    ]);
  });

  it('reports ACKED seqs missing from the log as lost, and unprocessed ones as pending', () => {
    const { audit, read } = setup();
    audit.addLedgerBlock(block(1, [acked(0, 0), acked(0, 1), acked(0, 2), acked(0, 3)]));
    for (const seq of [1, 2, 4]) read(seq, 0, seq - 1);
    audit.addReceipts('billing', [[1, 1]]);
    const findings = audit.findings(true);
    expect(findings.lost).toEqual([{ from: 3, to: 3 }]);
    expect(findings.pending).toEqual([
      { group: 'billing', from: 2, to: 2 },
      { group: 'billing', from: 4, to: 4 },
    ]);
  });

  it('judges nothing lost or not written before the log has been read to its end', () => {
    const { audit, read } = setup();
    audit.addLedgerBlock(block(1, [acked(0, 0), acked(0, 1), unknown]));
    read(1, 0, 0);
    const findings = audit.findings(false);
    expect(findings.lost).toEqual([]);
    expect(findings.unknownAbsent).toEqual([]);
    expect(audit.findings(true).lost).toEqual([{ from: 2, to: 2 }]);
  });

  it('does not judge blocks written after the run started as lost', () => {
    const { audit } = setup();
    audit.addLedgerBlock(block(1, [acked(0, 0)], T0 + 7_200_000));
    expect(audit.findings(true).lost).toEqual([]);
    expect(audit.findings(true).produced).toBe(1);
  });

  it('resolves UNKNOWN outcomes both ways: landed (with where, placed as read) or absent', () => {
    const { audit, read } = setup();
    audit.addLedgerBlock(block(1, [acked(0, 0), unknown, unknown]));
    read(1, 0, 0);
    read(2, 0, 1);
    const findings = audit.findings(true);
    expect(findings.unknownLanded).toEqual([{ seq: 2, partition: 0, offset: 1 }]);
    expect(findings.unknownAbsent).toEqual([[3, 3]]);
    expect(findings.produced).toBe(3);
  });

  it('explains every bucket: produced, in log, lost, duplicates, processed and pending', () => {
    const { audit, read } = setup();
    // Minute 0: seqs 1..4 (seq 3 lost); minute 1: seqs 5..6, seq 5 written twice.
    audit.addLedgerBlock(block(1, [acked(0, 0), acked(0, 1), acked(0, 2), acked(0, 3)]));
    audit.addLedgerBlock(block(5, [acked(0, 3), acked(0, 4)], T0 + MINUTE));
    for (const [seq, offset] of [
      [1, 0],
      [2, 1],
      [4, 2],
      [5, 3],
      [6, 4],
      [5, 5],
    ] as const)
      read(seq, 0, offset, 's-1', T0 + (seq >= 5 ? MINUTE : 0));
    read(7, 0, 6, 's-9', T0 + MINUTE); // a record the ledger never held
    audit.addReceipts('billing', [
      [1, 2],
      [1, 1],
      [5, 7],
    ]);
    expect(audit.buckets(true)).toEqual([
      bucketRow('2026-11-29T10:00:00.000Z', { produced: 4, inLog: 3, lost: 1 }, 'billing', {
        processed: 2,
        pending: 1,
        redelivered: 1,
      }),
      bucketRow(
        '2026-11-29T10:01:00.000Z',
        { produced: 2, inLog: 3, notInLedger: 1, duplicatesInLog: 1 },
        'billing',
        { processed: 3, pending: 0, redelivered: 0 },
      ),
    ]);
  });

  it('counts redeliveries a once guard suppressed apart from those that acted twice', () => {
    const { audit } = clean(100);
    // A guarded group rewound by 60: acted on 100, 60 delivered again and suppressed.
    audit.addReceipts('billing', [[1, 100]]);
    audit.addReceipts('billing', [], [[41, 100]]);
    // An unguarded group rewound by 10: acted twice on those.
    audit.addReceipts('email', [[1, 100]]);
    audit.addReceipts('email', [[91, 100]]);
    expect(audit.buckets(true)).toMatchObject([
      {
        processed: { billing: 100, email: 100 },
        pending: { billing: 0, email: 0 },
        redelivered: { billing: 60, email: 10 },
        suppressed: { billing: 60, email: 0 },
        actedTwice: { billing: 0, email: 10 },
      },
    ]);
    // Folded detail keeps the counts.
    audit.fold(T0 + 60 * MINUTE, true);
    expect(audit.buckets(true)[0]).toMatchObject({
      redelivered: { billing: 60, email: 10 },
      suppressed: { billing: 60, email: 0 },
      actedTwice: { billing: 0, email: 10 },
    });
  });
});

describe('audit state', () => {
  it('keeps a million interleaved records of four partitions in a handful of ranges', () => {
    const topic = new TopicLog('t');
    const log = topic.stream('s');
    for (let seq = 1; seq <= 1_000_000; seq++) {
      const partition = seq % 4;
      log.add(
        { seq, partition, offset: Math.floor(seq / 4), session: 's-1', timestamp: T0 + seq },
        MINUTE,
        false,
      );
    }
    const json = JSON.stringify(topic.toJSON());
    expect(log.log.seen().rangeCount).toBe(1);
    expect(log.placements.size).toBe(0);
    expect(json.length).toBeLessThan(2000);
  });

  it('round-trips through its checkpoint JSON', () => {
    const topic = new TopicLog('t');
    topic.next.set(0, 12);
    topic.untracked = 2;
    topic.countInBucket(T0 + 5, MINUTE);
    const log = topic.stream('s');
    for (const [seq, offset] of [
      [1, 0],
      [2, 1],
      [2, 2],
      [9, 3],
    ] as const)
      log.add({ seq, partition: 0, offset, session: 'a', timestamp: T0 }, MINUTE, false);
    const copy = new TopicLog('t', JSON.parse(JSON.stringify(topic.toJSON())));
    expect(copy.toJSON()).toEqual(topic.toJSON());
    expect(copy.stream('s').log.timesOf(2)).toBe(2);
    expect(copy.stream('s').placements.get(2)).toEqual([{ partition: 0, offset: 2, session: 'a' }]);
    expect(() => new TopicLog('other', topic.toJSON())).toThrow(/not for other/);
  });

  it('puts a timestamp in the bucket that starts at or before it', () => {
    expect(bucketOf(T0 + 59_999, MINUTE)).toBe(T0);
    expect(bucketOf(T0 + 60_000, MINUTE)).toBe(T0 + MINUTE);
  });
});

describe('recent records', () => {
  it('finds every copy still in the window, and forgets the oldest beyond its capacity', () => {
    const recent = new RecentRecords(3);
    recent.push('s', 1, { partition: 0, offset: 10, session: 'a' });
    recent.push('s', 2, { partition: 0, offset: 11, session: 'a' });
    recent.push('t', 2, { partition: 1, offset: 5, session: 'b' });
    recent.push('s', 2, { partition: 2, offset: 7, session: 'c' });
    expect(recent.find('s', 1)).toEqual([]);
    expect(recent.find('s', 2)).toEqual([
      { partition: 0, offset: 11, session: 'a' },
      { partition: 2, offset: 7, session: 'c' },
    ]);
    expect(recent.find('t', 2)).toEqual([{ partition: 1, offset: 5, session: 'b' }]);
  });
});
