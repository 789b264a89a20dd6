import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { LedgerFate } from '../chaos/checker.js';
import {
  committedView,
  judgeTransactionalRun,
  type LogEntry,
  type TxnAnswer,
  type TxnEvidence,
} from '../chaos/txn-checker.js';

// The transactional chaos checker's judgement on hand-made histories (issue 33): a healthy run
// passes, and each failure kind fails it on its own.

const record = (seq: number, partition: number, offset: number, value = `c101-r1-e${seq}`) => ({
  partition,
  offset,
  headers: { 'tally.stream': 't', 'tally.seq': String(seq), 'tally.session': 'tally-publish-0#1' },
  value,
});
const report = (seq: number, outcome: string, place?: [number, number]) => ({
  id: `e${seq}`,
  error_code: outcome === 'ACKED' ? 200 : outcome === 'UNKNOWN' ? 504 : 503,
  ...(outcome !== 'ACKED' && { outcome, retriable: true }),
  stream: 't',
  seq,
  ...(place && { partition_id: place[0], offset: place[1] }),
});
const HEAL = '2026-12-03T12:00:00.000Z';
const BOUND_MS = 38_000;
const after = (ms: number) => new Date(Date.parse(HEAL) + ms).toISOString();

/** Seq 1 committed at 0:0; seq 2 aborted (answered NOT_SENT, its copy at 0:1 not visible). */
function healthy(): TxnEvidence {
  const answers: TxnAnswer[] = [
    {
      request: 'c101-r1',
      attempt: 1,
      status: 207,
      answeredAt: after(-5000),
      reports: [report(1, 'ACKED', [0, 0]), report(2, 'NOT_SENT')],
    },
  ];
  return {
    seed: 1,
    stream: 't',
    committed: [record(1, 0, 0)],
    uncommittedCount: 2,
    lastSeq: 2,
    fates: new Map<number, LedgerFate[]>([
      [1, [{ status: 'ACKED', partition: 0, offset: 0 }]],
      [2, [{ status: 'NOT_SENT' }]],
    ]),
    answers,
    faults: [
      { phase: 'inject', at: after(-10_000) },
      { phase: 'heal', at: HEAL },
    ],
    audits: [{ label: 'final', report: { complete: true } }],
    lookups: [],
    boundMs: BOUND_MS,
  };
}

/** Seq 3 answered UNKNOWN before the heal, by a request no retry settled. */
function withUnknown(lookedUpAt: number, outcome: string, place?: [number, number]) {
  const run = healthy();
  const fates = new Map(run.fates);
  fates.set(3, [
    outcome === 'ACKED'
      ? { status: 'ACKED', partition: place?.[0] ?? -1, offset: place?.[1] ?? -1 }
      : { status: outcome as LedgerFate['status'] },
  ]);
  return {
    ...run,
    lastSeq: 3,
    fates,
    answers: [
      ...run.answers,
      {
        request: 'c101-r2',
        attempt: 1,
        status: 207,
        answeredAt: after(-1000),
        reports: [report(3, 'UNKNOWN')],
      },
    ],
    lookups: [
      {
        seq: 3,
        at: after(lookedUpAt),
        status: 200,
        body: {
          records: [
            {
              seq: 3,
              outcome,
              ...(place && { partition_id: place[0], offset: place[1] }),
            },
          ],
        },
      },
    ],
  };
}

describe('transactional chaos checker', () => {
  it('imports nothing from functions/: only kafkajs and the idempotent checker (itself independent)', () => {
    const source = readFileSync(new URL('../chaos/txn-checker.ts', import.meta.url), 'utf8');
    const imports = [...source.matchAll(/from '([^']+)'/g)].map((m) => m[1]);
    expect(imports).toEqual(['kafkajs', './checker.js']);
  });

  it('passes a run where answers, the ledger and a read_committed consumer agree', () => {
    const result = judgeTransactionalRun(healthy());
    expect(result.failures).toEqual([]);
    expect(result.lastLine).toMatch(
      /^chaos txn checker seed=1 PASS requests=1 .*ACKED=1 .*NOT_SENT=1 .*readCommittedDuplicates=0 lost=0 visibleNotWritten=0 .*unknownPastBound=0 boundMs=38000/,
    );
  });

  it('fails a seq a read_committed consumer sees twice', () => {
    const run = healthy();
    const result = judgeTransactionalRun({
      ...run,
      committed: [...run.committed, record(1, 3, 7)],
    });
    expect(result.ok).toBe(false);
    expect(result.counts.readCommittedDuplicates).toBe(1);
    expect(result.failures.join('\n')).toMatch(/seq 1: a read_committed consumer sees it 2 times/);
    expect(result.lastLine).toMatch(/FAIL\(\d+\) .*readCommittedDuplicates=1/);
  });

  it('fails a record id seen under two seqs (a resend whose first copy committed after all)', () => {
    const run = healthy();
    const fates = new Map(run.fates);
    fates.set(3, [{ status: 'ACKED', partition: 1, offset: 0 }]);
    const result = judgeTransactionalRun({
      ...run,
      lastSeq: 3,
      fates,
      committed: [...run.committed, record(3, 1, 0, 'c101-r1-e1')],
    });
    expect(result.counts.readCommittedDuplicates).toBe(1);
    expect(result.failures.join('\n')).toMatch(/record c101-r1-e1: .* under seqs 1, 3/);
  });

  it('fails an ACKED answer whose offsets a read_committed consumer does not see (aborted)', () => {
    const result = judgeTransactionalRun({ ...healthy(), committed: [] });
    expect(result.ok).toBe(false);
    expect(result.counts.lost).toBe(1);
    expect(result.failures.join('\n')).toMatch(
      /seq 1 answered ACKED at 0:0, which a read_committed consumer does not see there/,
    );
  });

  it('fails an ACKED answer seen elsewhere than its offsets', () => {
    const result = judgeTransactionalRun({ ...healthy(), committed: [record(1, 0, 4)] });
    expect(result.counts.lost).toBe(1);
  });

  it('fails a record answered NOT_SENT (aborted) that a read_committed consumer sees', () => {
    const run = healthy();
    const result = judgeTransactionalRun({
      ...run,
      committed: [...run.committed, record(2, 0, 1)],
    });
    expect(result.ok).toBe(false);
    expect(result.counts.visibleNotWritten).toBeGreaterThan(0);
    expect(result.failures.join('\n')).toMatch(/seq 2: answered NOT_SENT .* sees it at 0:1/);
  });

  it('takes a keyed retry that settled an UNKNOWN as definite, and checks what it said', () => {
    const run = healthy();
    const retried = {
      ...run,
      answers: [
        {
          ...(run.answers[0] as TxnAnswer),
          reports: [report(1, 'UNKNOWN'), report(2, 'NOT_SENT')],
        },
        {
          request: 'c101-r1',
          attempt: 2,
          status: 207,
          answeredAt: after(-3000),
          reports: [report(1, 'ACKED', [0, 0]), report(2, 'NOT_SENT')],
        },
      ],
    };
    const result = judgeTransactionalRun(retried);
    expect(result.failures).toEqual([]);
    expect(result.counts.unknownLeft).toBe(0);
  });

  it('passes an UNKNOWN looked up definite after its bound, and fails one still UNKNOWN', () => {
    const settled = judgeTransactionalRun({
      ...withUnknown(BOUND_MS + 5000, 'NOT_SENT'),
    });
    expect(settled.failures).toEqual([]);
    expect(settled.counts.unknownLeft).toBe(1);
    const acked = withUnknown(BOUND_MS + 5000, 'ACKED', [2, 0]);
    expect(
      judgeTransactionalRun({ ...acked, committed: [...acked.committed, record(3, 2, 0)] })
        .failures,
    ).toEqual([]);
    const stuck = judgeTransactionalRun(withUnknown(BOUND_MS + 5000, 'UNKNOWN'));
    expect(stuck.ok).toBe(false);
    expect(stuck.counts.unknownPastBound).toBe(1);
    expect(stuck.failures.join('\n')).toMatch(/seq 3: still UNKNOWN at .* 5000 ms past the bound/);
  });

  it('fails an UNKNOWN never looked up, or looked up only before its bound', () => {
    const never = { ...withUnknown(BOUND_MS + 5000, 'NOT_SENT'), lookups: [] };
    expect(judgeTransactionalRun(never).counts.unknownPastBound).toBe(1);
    const early = judgeTransactionalRun(withUnknown(BOUND_MS - 5000, 'NOT_SENT'));
    expect(early.counts.unknownPastBound).toBe(1);
    expect(early.failures.join('\n')).toMatch(/not looked up after the bound/);
  });

  it('fails an UNKNOWN looked up NOT_SENT that a read_committed consumer sees', () => {
    const run = withUnknown(BOUND_MS + 5000, 'NOT_SENT');
    const result = judgeTransactionalRun({
      ...run,
      committed: [...run.committed, record(3, 2, 0)],
    });
    expect(result.ok).toBe(false);
    expect(result.failures.join('\n')).toMatch(/seq 3: looked up NOT_SENT/);
  });

  it('fails a ledger left UNKNOWN, a seq without a fate, and an unfinished final audit', () => {
    const run = healthy();
    const fates = new Map(run.fates);
    fates.set(2, [{ status: 'UNKNOWN' }]);
    expect(judgeTransactionalRun({ ...run, fates }).failures.join('\n')).toMatch(/still UNKNOWN/);
    fates.delete(2);
    expect(judgeTransactionalRun({ ...run, fates }).failures.join('\n')).toMatch(/seq 2: 0 fates/);
    expect(
      judgeTransactionalRun({ ...run, audits: [{ label: 'final', error: 'boom' }] }).failures,
    ).toEqual(['the final audit of t did not complete: boom']);
  });

  it('fails a ledger ACKED that read_committed does not see, and an ACKED answer the ledger denies', () => {
    const run = healthy();
    const fates = new Map(run.fates);
    fates.set(1, [{ status: 'NOT_SENT' }]);
    const result = judgeTransactionalRun({ ...run, fates });
    expect(result.failures.join('\n')).toMatch(/seq 1: answered ACKED, the ledger says NOT_SENT/);
    const elsewhere = new Map(run.fates);
    elsewhere.set(1, [{ status: 'ACKED', partition: 5, offset: 5 }]);
    expect(judgeTransactionalRun({ ...run, fates: elsewhere }).counts.lost).toBe(1);
  });

  it('fails a transaction still open when the topic was read', () => {
    const result = judgeTransactionalRun({ ...healthy(), openAtEnd: 2 });
    expect(result.failures).toEqual([
      '2 record(s) in a transaction still open when the topic was read',
    ]);
  });
});

describe('committedView: what read_committed promises, from the markers', () => {
  const data = (offset: number, producerId: string, inTransaction = true): LogEntry => ({
    ...record(offset + 1, 0, offset),
    producerId,
    inTransaction,
  });
  const marker = (offset: number, producerId: string, commit: boolean): LogEntry => ({
    partition: 0,
    offset,
    headers: {},
    value: '',
    producerId,
    inTransaction: true,
    commit,
  });

  it('keeps committed and non-transactional records, drops aborted and open ones', () => {
    // Seed 203's shape: two producers' transactions interleaved, the one that began first
    // aborted last (kafkajs 2.2.4 showed its records to a read_committed consumer).
    const { committed, open } = committedView([
      data(0, 'p2'),
      data(1, 'p5'),
      data(2, 'p5'),
      marker(3, 'p5', false),
      data(4, 'p9', false),
      marker(5, 'p2', false),
      data(6, 'p2'),
      data(7, 'p5'),
      marker(8, 'p2', true),
      data(9, 'p7'),
    ]);
    expect(committed.map((r) => r.offset)).toEqual([4, 6]);
    expect(open).toBe(2); // p5's record at 7 and p7's at 9: no marker yet
  });

  it('judges each partition on its own', () => {
    const other = { ...marker(1, 'p2', true), partition: 1 };
    const { committed, open } = committedView([data(0, 'p2'), other]);
    expect(committed).toEqual([]);
    expect(open).toBe(1);
  });
});
