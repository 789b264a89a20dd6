import { describe, expect, it } from 'vitest';
import {
  identity,
  placeMissing,
  settle,
  unplacedUnknowns,
  whereLanded,
} from '../../../../functions/core/audit/placing.js';
import type {
  AuditPorts,
  AuditRequest,
  ScannedRecord,
  ScanRequest,
} from '../../../../functions/core/audit/ports.js';
import { StreamAudit } from '../../../../functions/core/audit/stream-audit.js';
import { RecentRecords, StreamLog, TopicLog } from '../../../../functions/core/audit/topic-log.js';
import type { LedgerBlock } from '../../../../functions/core/publish/ports.js';
import type { RecordOutcome } from '../../../../functions/core/shared/outcomes.js';
import { noFindings } from '../../../helpers/audit-findings.js';

const MINUTE = 60_000;
const T0 = Date.parse('2026-11-29T10:00:00Z');
const unknown: RecordOutcome = { status: 'UNKNOWN', message: 'no answer' };
const acked = (offset: number): RecordOutcome => ({
  status: 'ACKED',
  partition: 0,
  offset: String(offset),
});
const block = (firstSeq: number, outcomes: RecordOutcome[], writtenAt = T0): LedgerBlock => ({
  stream: 's',
  firstSeq,
  topic: 't',
  session: 'p-1',
  idempotencyKey: undefined,
  outcomes,
  writtenAt,
});
const read = (log: StreamLog, seq: number, offset: number, isUnknown = false) =>
  log.add({ seq, partition: 0, offset, session: 'p-1', timestamp: T0 }, MINUTE, isUnknown);

describe('identity', () => {
  it("is a record's stream and seq from its tally headers", () => {
    expect(identity({ 'tally.stream': 'orders', 'tally.seq': '42' })).toEqual({
      stream: 'orders',
      seq: 42,
    });
  });

  it('is undefined without a stream or with a seq that is not a positive integer', () => {
    expect(identity({ 'tally.seq': '1' })).toBeUndefined();
    for (const seq of ['0', '-1', '1.5', 'x', undefined])
      expect(identity({ 'tally.stream': 's', 'tally.seq': seq })).toBeUndefined();
  });
});

describe('settle', () => {
  it('rewrites a landed UNKNOWN as ACKED where the log holds it', () => {
    const log = new StreamLog();
    read(log, 2, 17, true);
    expect(whereLanded(log, 2)).toEqual({ partition: 0, offset: 17, session: 'p-1' });
    const settled = settle(block(1, [acked(16), unknown]), log, noFindings('s'), T0 + 1);
    expect(settled?.outcomes).toEqual([acked(16), { status: 'ACKED', partition: 0, offset: '17' }]);
  });

  it('rewrites an absent UNKNOWN as NOT_SENT only once its block is past the horizon', () => {
    const log = new StreamLog();
    const findings = { ...noFindings('s'), unknownAbsent: [[1, 1] as const] };
    expect(settle(block(1, [unknown], T0), log, findings, T0)).toBeUndefined();
    expect(settle(block(1, [unknown], T0), log, findings, T0 + 1)?.outcomes).toEqual([
      { status: 'NOT_SENT', message: 'not in the log when the audit read it: not written' },
    ]);
  });

  it('changes nothing (undefined) when the log settles none of its outcomes', () => {
    const log = new StreamLog();
    expect(settle(block(1, [acked(0), unknown]), log, noFindings('s'), T0 + 1)).toBeUndefined();
  });
});

describe('unplacedUnknowns', () => {
  it('is the UNKNOWN seqs the log holds whose copy this run has not found', () => {
    const log = new StreamLog();
    read(log, 1, 10); // read by an earlier run, before its outcome was known to be UNKNOWN
    read(log, 2, 11, true); // found by this run
    const blocks = [block(1, [unknown, unknown, unknown, acked(12)])];
    expect([...unplacedUnknowns(blocks, log).ranges()]).toEqual([[1, 1]]);
  });
});

describe('placeMissing', () => {
  function setup() {
    const state = new TopicLog('t');
    const log = state.stream('s');
    const audit = new StreamAudit('s', log, { bucketMs: MINUTE, judgeBefore: T0 + MINUTE });
    // Seq 3 was read by an earlier run at offset 12; only now is its outcome known UNKNOWN.
    read(log, 1, 10);
    read(log, 2, 11);
    read(log, 3, 12);
    const blocks = [block(1, [acked(10), acked(11), unknown])];
    for (const b of blocks) audit.addLedgerBlock(b);
    const scans: ScanRequest[] = [];
    const records: ScannedRecord[] = [10, 11, 12].map((offset, i) => ({
      partition: 0,
      offset,
      timestamp: T0,
      headers: { 'tally.stream': 's', 'tally.seq': String(i + 1), 'tally.session': 'p-1' },
    }));
    const unused = () => {
      throw new Error('not used by placeMissing');
    };
    const ports: AuditPorts = {
      ledger: { forEachBlock: unused, find: unused, write: unused },
      log: {
        async scan(_topic, request, onRecord) {
          scans.push(request);
          for (const r of records) onRecord(r);
          return { scanned: 3, next: new Map(), logStart: new Map(), complete: true };
        },
      },
      receipts: { forEachBatch: unused, counts: unused },
      checkpoints: { load: unused, save: unused },
    };
    const request = (scanDeadlineAt: number): AuditRequest => ({
      topic: 't',
      groups: [],
      scanDeadlineAt,
      horizonMs: MINUTE,
      bucketMs: MINUTE,
    });
    return { state, log, audits: new Map([['s', audit]]), blocks, scans, ports, request };
  }

  it('takes copies from the records the scan passed last, reading nothing again', async () => {
    const { state, log, audits, blocks, scans, ports, request } = setup();
    const recent = new RecentRecords(10);
    recent.push('s', 3, { partition: 0, offset: 12, session: 'p-1' });
    const unknownBlocks = new Map([['s', blocks]]);
    await placeMissing(ports, request(T0 + MINUTE), state, audits, recent, unknownBlocks, () => T0);
    expect(log.landed.get(3)).toEqual({ partition: 0, offset: 12, session: 'p-1' });
    expect(scans).toEqual([]);
  });

  it("re-reads the stream's span of the log for a copy it no longer has at hand", async () => {
    const { state, log, audits, blocks, scans, ports, request } = setup();
    const unknownBlocks = new Map([['s', blocks]]);
    const recent = new RecentRecords(10);
    await placeMissing(ports, request(T0 + MINUTE), state, audits, recent, unknownBlocks, () => T0);
    expect(scans).toEqual([
      { from: new Map([[0, 10]]), until: new Map([[0, 13]]), deadlineAt: T0 + MINUTE },
    ]);
    expect(log.landed.get(3)).toEqual({ partition: 0, offset: 12, session: 'p-1' });
    // Only the seq looked for is placed.
    expect(log.landed.has(1)).toBe(false);
  });

  it('reads nothing again once the scan deadline has passed', async () => {
    const { state, log, audits, blocks, scans, ports, request } = setup();
    const unknownBlocks = new Map([['s', blocks]]);
    await placeMissing(
      ports,
      request(T0),
      state,
      audits,
      new RecentRecords(10),
      unknownBlocks,
      () => T0,
    );
    expect(scans).toEqual([]);
    expect(log.landed.has(3)).toBe(false);
  });
});
