import { describe, expect, it } from 'vitest';
import { capped, link, topicBuckets } from '../../../../functions/core/audit/links.js';
import type {
  AuditPorts,
  AuditRequest,
  ReconcileEvent,
} from '../../../../functions/core/audit/ports.js';
import { readCounts } from '../../../../functions/core/audit/read-counts.js';
import { LIST_CAP, REPORT_ROWS } from '../../../../functions/core/audit/retention.js';
import type { AuditFindings } from '../../../../functions/core/audit/stream-audit.js';
import { TopicLog } from '../../../../functions/core/audit/topic-log.js';
import type { LedgerBlock } from '../../../../functions/core/publish/ports.js';
import type { BucketCount } from '../../../../functions/core/receipts/receipts-input.js';
import { noFindings } from '../../../helpers/audit-findings.js';

const MINUTE = 60_000;
const T0 = Date.parse('2026-11-29T10:00:00Z');

const findings = (over: Partial<AuditFindings> = {}): AuditFindings => ({
  ...noFindings('s'),
  ...over,
});

const unused = () => {
  throw new Error('not used by links.ts');
};

/** The ports links.ts reads: the ledger's find, reconcile's events, count-only receipts. */
function ports(options: {
  blocks?: readonly LedgerBlock[];
  events?: Readonly<Record<string, ReconcileEvent[]>>;
  counts?: Readonly<Record<string, BucketCount[]>>;
  withoutReconcile?: boolean;
}) {
  const finds: number[] = [];
  const asked: string[] = [];
  const audit: AuditPorts = {
    ledger: {
      forEachBlock: unused,
      async find(_stream, seq) {
        finds.push(seq);
        return options.blocks?.find(
          (b) => seq >= b.firstSeq && seq < b.firstSeq + b.outcomes.length,
        );
      },
      write: unused,
    },
    log: { scan: unused },
    receipts: {
      forEachBatch: unused,
      async counts(group) {
        return options.counts?.[group] ?? [];
      },
    },
    checkpoints: { load: unused, save: unused },
    ...(!options.withoutReconcile && {
      reconcile: {
        async events(group, topic) {
          asked.push(`${group}@${topic}`);
          return options.events?.[group] ?? [];
        },
      },
    }),
  };
  return { audit, finds, asked };
}

const counted = (at: number, count: number): BucketCount => ({
  start: new Date(at).toISOString(),
  end: new Date(at + MINUTE).toISOString(),
  count,
});

const request = (groups: string[]): AuditRequest => ({
  topic: 't',
  groups,
  scanDeadlineAt: T0,
  horizonMs: MINUTE,
  bucketMs: MINUTE,
});

describe('capped', () => {
  it('keeps every list whole when none is over the cap, with no leftOff', () => {
    const small = findings({ lost: [{ from: 1, to: 2 }] });
    expect(capped(small)).toEqual({ findings: small });
  });

  it('keeps the newest LIST_CAP items of a longer list and counts the rest per list', () => {
    const lost = Array.from({ length: LIST_CAP + 3 }, (_, i) => ({ from: i * 10, to: i * 10 }));
    const pending = Array.from({ length: LIST_CAP + 1 }, (_, i) => ({
      group: 'g',
      from: i,
      to: i,
    }));
    const { findings: cut, leftOff } = capped(findings({ lost, pending, produced: 7 }));
    expect(cut.lost).toEqual(lost.slice(3));
    expect(cut.pending).toEqual(pending.slice(1));
    expect(cut.produced).toBe(7);
    expect(leftOff).toEqual({ lost: 3, pending: 1 });
  });
});

describe('link', () => {
  it('names where the ledger acknowledged each lost seq, and the first of its range', async () => {
    const blocks: LedgerBlock[] = [
      {
        stream: 's',
        firstSeq: 5,
        topic: 't',
        session: 'p-1',
        idempotencyKey: undefined,
        writtenAt: T0,
        outcomes: [
          { status: 'ACKED', partition: 2, offset: '40' },
          { status: 'ACKED', partition: 2, offset: '41' },
          { status: 'UNKNOWN', message: 'no answer' },
        ],
      },
    ];
    const { audit, finds } = ports({ blocks });
    const lost = [
      { from: 5, to: 6 },
      { from: 7, to: 7 },
      { from: 90, to: 91 },
    ];
    const linked = await link(audit, 't', 's', findings({ lost }), []);
    expect(linked.lost).toEqual([
      {
        from: 5,
        to: 6,
        acked: { partition: 2, offset: 40 },
        ackedEach: [
          { seq: 5, partition: 2, offset: 40 },
          { seq: 6, partition: 2, offset: 41 },
        ],
      },
      { from: 7, to: 7 },
      { from: 90, to: 91 },
    ]);
    expect(finds).toEqual([5, 7, 90]);
  });

  it("links each group's redeliveries to its reconcile events, asked once per group", async () => {
    const rewind: ReconcileEvent = {
      at: '2026-11-29T10:01:00.000Z',
      partition: 0,
      status: 'REWIND',
      detail: { from: 10, to: 2 },
    };
    const { audit, asked } = ports({ events: { billing: [rewind] } });
    const consumerDuplicates = [
      { group: 'billing', from: 2, to: 9, times: 2 },
      { group: 'billing', from: 12, to: 12, times: 3 },
      { group: 'search', from: 1, to: 1, times: 2 },
    ];
    const linked = await link(audit, 't', 's', findings({ consumerDuplicates }), []);
    expect(linked.consumerDuplicates).toEqual([
      { ...consumerDuplicates[0], reconcileEvents: [rewind] },
      { ...consumerDuplicates[1], reconcileEvents: [rewind] },
      { ...consumerDuplicates[2], reconcileEvents: [] },
    ]);
    expect(asked).toEqual(['billing@t', 'search@t']);
    expect(linked.buckets).toEqual([]);
    expect(linked.leftOff).toBeUndefined();
  });

  it('links no events without a reconcile port', async () => {
    const { audit } = ports({ withoutReconcile: true });
    const consumerDuplicates = [{ group: 'billing', from: 2, to: 3, times: 2 }];
    const linked = await link(audit, 't', 's', findings({ consumerDuplicates }), []);
    expect(linked.consumerDuplicates).toEqual([{ ...consumerDuplicates[0], reconcileEvents: [] }]);
  });
});

/** The topic's rows as a run reports them: the group's count-only receipts read, then listed. */
async function rowsOf(audit: AuditPorts, req: AuditRequest, state: TopicLog) {
  const read = await readCounts(audit.receipts, state, req, T0);
  return topicBuckets(req, state, state.counted.reported(read));
}

describe('topicBuckets', () => {
  it('rows of records in the log and count-only receipts per group, oldest first', async () => {
    const state = new TopicLog('t');
    state.countInBucket(T0 + 5_000, MINUTE);
    state.countInBucket(T0 + 6_000, MINUTE);
    state.countInBucket(T0 + MINUTE, MINUTE);
    const { audit } = ports({
      counts: {
        billing: [counted(T0 + 30_000, 2), counted(T0 + 2 * MINUTE, 1)],
        search: [counted(T0, 4)],
      },
    });
    expect(await rowsOf(audit, request(['billing', 'search']), state)).toEqual([
      { start: new Date(T0).toISOString(), inLog: 2, counted: { billing: 2, search: 4 } },
      { start: new Date(T0 + MINUTE).toISOString(), inLog: 1, counted: {} },
      { start: new Date(T0 + 2 * MINUTE).toISOString(), inLog: 0, counted: { billing: 1 } },
    ]);
  });

  it('sums buckets older than the newest REPORT_ROWS, and folded ones, into a first row', async () => {
    const state = new TopicLog('t');
    const buckets = REPORT_ROWS + 2;
    for (let i = 0; i < buckets; i++) state.countInBucket(T0 + i * MINUTE, MINUTE);
    // One more record in an old bucket folded already.
    state.olderInLog = 5;
    state.foldedBefore = T0;
    state.foldedSince = T0 - 10 * MINUTE;
    const rows = await rowsOf(ports({}).audit, request([]), state);
    expect(rows).toHaveLength(REPORT_ROWS + 1);
    expect(rows[0]).toEqual({
      start: new Date(T0 - 10 * MINUTE).toISOString(),
      until: new Date(T0 + 2 * MINUTE).toISOString(),
      inLog: 5 + 2,
      counted: {},
    });
    expect(rows[1]).toEqual({
      start: new Date(T0 + 2 * MINUTE).toISOString(),
      inLog: 1,
      counted: {},
    });
  });
});
