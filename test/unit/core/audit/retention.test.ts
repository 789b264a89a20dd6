import { describe, expect, it } from 'vitest';
import { KEEP_PLACED } from '../../../../functions/core/audit/retention.js';
import { SeqCounter, SeqRanges } from '../../../../functions/core/audit/seq-ranges.js';
import { StreamAudit } from '../../../../functions/core/audit/stream-audit.js';
import { RecentRecords, StreamLog, TopicLog } from '../../../../functions/core/audit/topic-log.js';
import type { LedgerBlock } from '../../../../functions/core/publish/ports.js';
import type { RecordOutcome } from '../../../../functions/core/shared/outcomes.js';
import { DAY, MINUTE, simulate } from '../../../helpers/audit-simulation.js';

// Folding detail older than the retention horizon (issue 13), piece by piece; the 180-day
// simulation is core-audit-horizon.test.ts.

const T0 = Date.parse('2026-11-29T10:00:00Z');
const acked = (offset: number): RecordOutcome => ({
  status: 'ACKED',
  partition: 0,
  offset: String(offset),
});
const block = (firstSeq: number, count: number, writtenAt: number): LedgerBlock => ({
  stream: 's',
  firstSeq,
  topic: 't',
  session: 'p',
  idempotencyKey: undefined,
  outcomes: Array.from({ length: count }, (_, i) => acked(firstSeq + i)),
  writtenAt,
});

describe('folding seq sets', () => {
  it('keeps only the seqs above a floor', () => {
    const set = SeqRanges.from([
      [1, 3],
      [5, 9],
      [12, 12],
    ]);
    expect(set.above(6).toJSON()).toEqual([
      [7, 9],
      [12, 12],
    ]);
    expect(set.above(0).equals(set)).toBe(true);
    expect(set.above(12).isEmpty).toBe(true);
  });

  it('drops counted seqs up to a floor and keeps the observations of the rest', () => {
    const counter = new SeqCounter().addRange(1, 10).addRange(4, 6).addRange(9, 9);
    counter.dropThrough(5);
    expect(counter.seen().toJSON()).toEqual([[6, 10]]);
    expect(counter.duplicates()).toEqual([
      { from: 6, to: 6, times: 2 },
      { from: 9, to: 9, times: 2 },
    ]);
    expect(counter.count).toBe(7);
    expect(SeqCounter.fromJSON(counter.toJSON()).timesOf(9)).toBe(2);
  });
});

describe('a stream audit that folds', () => {
  /** Seqs 1..10 in bucket T0, 11..20 an hour later; seq 4 lost, seq 15 twice in the log. */
  function twoHours() {
    const log = new StreamLog();
    const audit = new StreamAudit('s', log, { bucketMs: MINUTE, judgeBefore: T0 + DAY });
    audit.addLedgerBlock(block(1, 10, T0));
    audit.addLedgerBlock(block(11, 10, T0 + 3_600_000));
    for (let seq = 1; seq <= 20; seq++) {
      if (seq === 4) continue;
      const at = seq <= 10 ? T0 : T0 + 3_600_000;
      log.add({ seq, partition: 0, offset: seq, session: 'p', timestamp: at }, MINUTE, false);
    }
    log.add({ seq: 15, partition: 0, offset: 99, session: 'q', timestamp: T0 }, MINUTE, false);
    audit.addReceipts('billing', [[1, 20]]);
    return { log, audit };
  }

  it('folds the buckets that ended by the cutoff into one row of totals', () => {
    const { log, audit } = twoHours();
    log.forgetProduced(audit.produced);
    expect(log.buckets.size).toBe(0); // the ledger places every seq the log holds
    audit.fold(T0 + 30 * MINUTE, true);
    expect(log.floor).toBe(10);
    expect(log.older).toMatchObject({ produced: 10, inLog: 9, lost: 1, since: T0 });
    expect(log.log.seen().toJSON()).toEqual([[11, 20]]);
    const findings = audit.findings(true);
    expect(findings.lost).toEqual([]); // reported by earlier runs; counted in the older row
    expect(findings.produced).toBe(20);
    expect(findings.processed).toEqual({ billing: 20 });
    expect(findings.producerDuplicates.map((d) => d.seq)).toEqual([15]);
    const [older, ...rows] = audit.buckets(true);
    expect(older).toMatchObject({ start: new Date(T0).toISOString(), produced: 10, lost: 1 });
    expect(older?.until).toBe(new Date(T0 + MINUTE).toISOString());
    expect(rows).toHaveLength(1);
  });

  it('passes over folded ledger blocks and receipts, and counts late copies of folded seqs', () => {
    const { log, audit } = twoHours();
    audit.fold(T0 + 30 * MINUTE, true);
    const next = new StreamAudit('s', new StreamLog(log.toJSON()), {
      bucketMs: MINUTE,
      judgeBefore: T0 + DAY,
    });
    next.addLedgerBlock(block(1, 10, T0));
    next.addLedgerBlock(block(11, 10, T0 + 3_600_000));
    next.addReceipts('billing', [[1, 20]]);
    expect(next.findings(true)).toMatchObject({ produced: 20, processed: { billing: 20 } });
    const late = new StreamLog(log.toJSON());
    expect(
      late.add({ seq: 3, partition: 0, offset: 7, session: 'r', timestamp: T0 }, MINUTE, false),
    ).toBe(0);
    expect(late.belowFloor).toBe(1);
  });

  it('lists the newest buckets one by one and sums the others in a first row', () => {
    const { audit } = twoHours();
    const rows = audit.buckets(true, 1);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      produced: 10,
      lost: 1,
      until: new Date(T0 + MINUTE).toISOString(),
    });
    expect(rows[1]).toMatchObject({ produced: 10, duplicatesInLog: 1 });
    expect(rows[1]?.until).toBeUndefined();
  });
});

describe('placements', () => {
  it('looks for and keeps the copies of the newest repeats only', () => {
    const log = new StreamLog();
    const audit = new StreamAudit('s', log, { bucketMs: MINUTE, judgeBefore: T0 + DAY });
    const read = (seq: number, offset: number) =>
      log.add({ seq, partition: 0, offset, session: 'p', timestamp: T0 }, MINUTE, false);
    for (let seq = 1; seq <= 300; seq++) read(seq, seq);
    for (let seq = 1; seq <= 300; seq += 2) read(seq, 1000 + seq); // 150 repeats
    const missing = audit.missingPlacements();
    expect(missing.count).toBe(KEEP_PLACED);
    expect(missing.max).toBe(299);
    for (let seq = 1; seq <= 300; seq += 2)
      log.place(seq, { partition: 0, offset: seq, session: 'p' });
    log.prunePlacements(KEEP_PLACED);
    expect(log.placements.size).toBe(KEEP_PLACED);
    expect(Math.min(...log.placements.keys())).toBe(101);
  });
});

describe('topic buckets', () => {
  it('folds old buckets into one count and counts late records of them there', () => {
    const topic = new TopicLog('t');
    topic.countInBucket(T0, MINUTE);
    topic.countInBucket(T0 + 2 * MINUTE, MINUTE);
    topic.foldBuckets(T0 + MINUTE, MINUTE);
    topic.countInBucket(T0 + 5, MINUTE);
    expect([...topic.topicBuckets]).toEqual([[T0 + 2 * MINUTE, 1]]);
    expect(topic.olderInLog).toBe(2);
    expect(new TopicLog('t', topic.toJSON()).toJSON()).toEqual(topic.toJSON());
  });
});

describe('recent records', () => {
  it('grows its arrays as records come and still finds the first ones', () => {
    const recent = new RecentRecords(5000);
    for (let seq = 1; seq <= 3000; seq++)
      recent.push('s', seq, { partition: 0, offset: seq, session: 'a' });
    expect(recent.find('s', 1)).toEqual([{ partition: 0, offset: 1, session: 'a' }]);
    expect(recent.copiesOf('s', SeqRanges.from([[2999, 3000]])).size).toBe(2);
  });
});

describe('a checkpoint the store refuses', () => {
  it('is folded whole and saved, and the report says so: the next runs carry on', async () => {
    const overflows: string[] = [];
    const result = await simulate({
      streams: 3,
      days: 2,
      auditEveryMs: 15 * MINUTE,
      recordsPerRun: 2,
      bucketMs: 5 * MINUTE,
      checkpointLimitBytes: 600,
      afterRun: ({ report }) => {
        if (report.retention?.overflow) overflows.push(report.retention.overflow);
      },
    });
    expect(result.runs).toBe(192);
    expect(overflows.length).toBeGreaterThan(0);
    expect(overflows[0]).toMatch(/over the 600 bytes .* folded into totals/);
    expect(result.maxCheckpointBytes).toBeLessThanOrEqual(600);
    // 192 simulated runs, CPU-bound: over Vitest's 5 s at load ~38 on 2 cores.
  }, 60_000);
});
