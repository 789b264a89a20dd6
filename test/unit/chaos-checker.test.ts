import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type Answer,
  type ChaosEvidence,
  judgeChaosRun,
  type LedgerFate,
} from '../chaos/checker.js';

// The chaos checker's judgement on hand-made evidence: a healthy run passes, and each condition
// of issue 16 fails it on its own.

const record = (seq: number, partition: number, offset: number, session = 's-a') => ({
  partition,
  offset,
  headers: { 'tally.stream': 't', 'tally.seq': String(seq), 'tally.session': session },
  value: `v${seq}`,
});

const acked = (seq: number, partition: number, offset: number) => ({
  id: `e${seq}`,
  error_code: 200,
  stream: 't',
  seq,
  partition_id: partition,
  offset,
});

function healthy(): ChaosEvidence {
  const answers: Answer[] = [
    {
      request: 'c1-r1',
      attempt: 1,
      status: 207,
      reports: [
        acked(1, 0, 0),
        { id: 'e2', error_code: 503, outcome: 'NOT_SENT', stream: 't', seq: 2, retriable: true },
      ],
    },
    { request: 'c1-r2', attempt: 1, status: 207, reports: [acked(3, 1, 0)] },
  ];
  const fates = new Map<number, LedgerFate[]>([
    [1, [{ status: 'ACKED', partition: 0, offset: 0 }]],
    [2, [{ status: 'NOT_SENT' }]],
    [3, [{ status: 'ACKED', partition: 1, offset: 0 }]],
  ]);
  return {
    seed: 1,
    stream: 't',
    records: [record(1, 0, 0), record(3, 1, 0)],
    lowWatermarks: [0, 0],
    lastSeq: 3,
    fates,
    answers,
    faults: [{ phase: 'inject' }, { phase: 'heal' }],
    audits: [
      {
        label: 'final',
        report: { complete: true, streams: [{ stream: 't', producerDuplicates: [], lost: [] }] },
      },
    ],
    reconciles: [{ summary: { problems: [] } }],
    commits: [
      { group: 'g', partition: 0, offset: 0 },
      { group: 'g', partition: 0, offset: 1 },
    ],
  };
}

describe('chaos checker', () => {
  it('imports nothing from functions/ (nor any local module): its judgement is its own', () => {
    const source = readFileSync(new URL('../chaos/checker.ts', import.meta.url), 'utf8');
    const imports = [...source.matchAll(/from '([^']+)'/g)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((name) => name?.startsWith('.') || name?.includes('functions'))).toEqual(
      [],
    );
  });

  it('passes a run where every answer, the ledger and the log agree', () => {
    const result = judgeChaosRun(healthy());
    expect(result.failures).toEqual([]);
    expect(result.lastLine).toMatch(
      /^chaos checker seed=1 PASS requests=2 .*ACKED=2 .*NOT_SENT=1 .*faults=1 .*lost=0/,
    );
  });

  it('fails an ACKED answer whose record is not in the log', () => {
    const run = { ...healthy(), records: [record(3, 1, 0)] };
    const result = judgeChaosRun(run);
    expect(result.ok).toBe(false);
    expect(result.counts.lost).toBe(1);
  });

  it('fails a seq answered NOT_SENT that the log holds', () => {
    const run = healthy();
    const result = judgeChaosRun({ ...run, records: [...run.records, record(2, 0, 1)] });
    expect(result.failures.join('\n')).toMatch(/seq 2: the client's last answer was NOT_SENT/);
  });

  it('fails the same seq twice in one session, unless that class is tolerated', () => {
    const run = healthy();
    const twice = { ...run, records: [...run.records, record(1, 0, 5)] };
    const named = {
      ...twice,
      audits: [
        {
          label: 'final',
          report: {
            complete: true,
            streams: [
              {
                stream: 't',
                lost: [],
                producerDuplicates: [
                  {
                    seq: 1,
                    times: 2,
                    copies: [
                      { partition: 0, offset: 0 },
                      { partition: 0, offset: 5 },
                    ],
                  },
                ],
              },
            ],
          },
        },
      ],
    };
    expect(judgeChaosRun(named).failures.join('\n')).toMatch(
      /2 copies in one producer session s-a/,
    );
    const tolerated = judgeChaosRun(named, { tolerate: ['sameSession'] });
    expect(tolerated.ok).toBe(true);
    expect(tolerated.known).toHaveLength(1);
    expect(tolerated.lastLine).toMatch(/PASS KNOWN\(1\) .*duplicates=1 explained=1 sameSession=1/);
  });

  it('fails a duplicate across sessions that the audit does not name with every copy', () => {
    const run = healthy();
    const twice = { ...run, records: [...run.records, record(1, 2, 0, 's-b')] };
    expect(judgeChaosRun(twice).failures.join('\n')).toMatch(
      /seq 1: 2 copies .* the audit names none/,
    );
    const partly = {
      ...twice,
      audits: [
        {
          label: 'final',
          report: {
            complete: true,
            streams: [
              {
                stream: 't',
                lost: [],
                producerDuplicates: [{ seq: 1, times: 2, copies: [{ partition: 0, offset: 0 }] }],
              },
            ],
          },
        },
      ],
    };
    expect(judgeChaosRun(partly).ok).toBe(false);
  });

  it('fails a seq without a fate and an UNKNOWN the audit left', () => {
    const run = healthy();
    const fates = new Map(run.fates);
    fates.delete(2);
    expect(judgeChaosRun({ ...run, fates }).counts.noFate).toBe(1);
    fates.set(2, [{ status: 'UNKNOWN' }]);
    expect(judgeChaosRun({ ...run, fates }).failures.join('\n')).toMatch(/still UNKNOWN/);
  });

  it('fails a run that leaves more than 5 % of the seqs it allocated unused (VOID)', () => {
    // 100 records acknowledged and in the log, then `unused` seqs allocated and never sent.
    const withUnused = (unused: number): ChaosEvidence => {
      const fates = new Map<number, LedgerFate[]>();
      for (let seq = 1; seq <= 100; seq++)
        fates.set(seq, [{ status: 'ACKED', partition: 0, offset: seq - 1 }]);
      for (let seq = 101; seq <= 100 + unused; seq++) fates.set(seq, [{ status: 'VOID' }]);
      return {
        ...healthy(),
        records: Array.from({ length: 100 }, (_, i) => record(i + 1, 0, i)),
        lastSeq: 100 + unused,
        fates,
        answers: [],
      };
    };
    expect(judgeChaosRun(withUnused(5)).failures).toEqual([]); // 5 of 105: 4.8 %
    const over = judgeChaosRun(withUnused(6)); // 6 of 106: 5.7 %
    expect(over.ok).toBe(false);
    expect(over.failures).toEqual(['6 of 106 allocated seqs VOID (5.7 %), more than 5 % unused']);
    expect(over.counts.VOID).toBe(6);
  });

  it('fails a REWIND no commit shows, and accepts one the commits show', () => {
    const run = {
      ...healthy(),
      reconciles: [{ summary: { problems: [{ group: 'g', anomalies: { REWIND: 1 } }] } }],
    };
    expect(judgeChaosRun(run).counts.falseRewindLost).toBe(1);
    const rewound = { ...run, commits: [...run.commits, { group: 'g', partition: 0, offset: 0 }] };
    expect(judgeChaosRun(rewound).ok).toBe(true);
  });

  it('fails a lookup answer that differs from the ledger', () => {
    const run = healthy();
    const said = (offset: number) => ({
      seq: 1,
      status: 200,
      body: { records: [{ seq: 1, outcome: 'ACKED', partition_id: 0, offset }] },
    });
    expect(judgeChaosRun({ ...run, lookups: [said(0)] }).ok).toBe(true);
    expect(judgeChaosRun({ ...run, lookups: [said(7)] }).failures.join('\n')).toMatch(
      /lookup of seq 1/,
    );
  });

  it('takes a duplicate as named when an earlier scheduled audit listed it with every copy', () => {
    const run = healthy();
    const final = run.audits[0] as ChaosEvidence['audits'][number];
    const earlier = {
      label: 'scheduled 1',
      report: {
        complete: true,
        streams: [
          {
            stream: 't',
            lost: [],
            producerDuplicates: [
              {
                seq: 1,
                times: 2,
                copies: [
                  { partition: 0, offset: 0 },
                  { partition: 2, offset: 0 },
                ],
              },
            ],
          },
        ],
      },
    };
    const twice = { ...run, records: [...run.records, record(1, 2, 0, 's-b')] };
    expect(judgeChaosRun({ ...twice, audits: [earlier, final] }).ok).toBe(true);
    expect(judgeChaosRun({ ...twice, audits: [final] }).ok).toBe(false);
  });

  it('fails a retry that answered NOT_SENT after an UNKNOWN whose record landed, unless tolerated', () => {
    const run = healthy();
    const unknown = {
      id: 'e2',
      error_code: 504,
      outcome: 'UNKNOWN',
      stream: 't',
      seq: 2,
      retriable: true,
    };
    const notSent = {
      id: 'e2',
      error_code: 503,
      outcome: 'NOT_SENT',
      stream: 't',
      seq: 2,
      retriable: true,
    };
    const landed = {
      ...run,
      records: [...run.records, record(2, 0, 1)],
      answers: [
        { request: 'c1-r3', attempt: 1, status: 207, reports: [unknown] },
        { request: 'c1-r3', attempt: 2, status: 207, reports: [notSent] },
      ],
    };
    expect(judgeChaosRun(landed).failures).toHaveLength(2);
    const tolerated = judgeChaosRun(landed, { tolerate: ['unknownDowngraded'] });
    expect(tolerated.failures).toEqual([]);
    expect(tolerated.known).toHaveLength(2);
  });
});
