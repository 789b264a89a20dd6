import { describe, expect, it } from 'vitest';
import { reportPage, STREAM_PAGES } from '../../functions/audit/report-pages.js';
import type { GroupSnapshot } from '../../functions/core/reconcile/ports.js';
import { createReconciler } from '../../functions/core/reconcile/reconciler.js';
import { planRestore } from '../../functions/core/reconcile/restore-plan.js';
import { InvalidInputError, NotFoundError } from '../../functions/core/shared/errors.js';
import { decodeCursor, type PageRequest } from '../../functions/core/shared/pages.js';
import {
  executedAnswer,
  GROUP_PAGES,
  PARTITION_PAGES,
  planAnswer,
  reconcileNextAnswer,
  reconcileNowAnswer,
} from '../../functions/reconcile/run-pages.js';
import { auditReportOf, fullFindings } from '../helpers/audit-findings.js';
import { memoryHistory, memoryReports } from '../helpers/reconcile-stores.js';

// reconcile-now, restore and audit answers by pages, at sizes whose whole answer crosses Lambda's 6 MB
// response (6,291,556 bytes): simulated, with the reconcile core over in-memory stores (30,000
// real groups are not reasonable on a local broker), at the longest names Kafka allows.

const LAMBDA_RESPONSE = 6_291_556;
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const link = (cursor: string | undefined) => (cursor === undefined ? null : `?cursor=${cursor}`);
const cursorOf = (next: string | null) => (next === null ? undefined : next.slice(8));

/** A reconcile run's report over `groups` groups of 255-character ids on one partition each. */
async function reportOf(groups: number) {
  const snapshots: GroupSnapshot[] = Array.from({ length: groups }, (_, g) => ({
    groupId: `${String(g).padStart(6, '0')}-${'g'.repeat(248)}`,
    state: 'Stable',
    members: [],
    partitions: [
      { topic: 't'.repeat(249), partition: g, committed: 900, logStart: 0, logEnd: 1000 },
    ],
  }));
  const reconciler = createReconciler(
    {
      source: {
        read: async () => ({
          observedAt: Date.parse('2026-11-30T12:00:00Z'),
          groups: snapshots,
          unreadable: [],
          adminCalls: 3,
        }),
      },
      history: memoryHistory(),
      reports: memoryReports(),
      mappings: {
        list: async () => [],
        upsert: async () => true,
        deleteIfUnchanged: async () => true,
      },
    },
    { windowSize: 10, graceMs: 0, retentionMs: 14 * 86_400_000, pruneBudget: 200 },
  );
  return reconciler.run();
}

function memoryRuns() {
  const runs = new Map<string, object[]>();
  return {
    runs,
    save: async (rows: readonly object[]) => {
      const id = `run-${runs.size}`;
      runs.set(id, [...rows]);
      return id;
    },
    load: async (id: string) => runs.get(id),
  };
}

describe('reconcile-now by pages', () => {
  it('answers 30,000 groups of 255-character ids (the whole answer over 6 MB) in pages under 6 MB, every group once', async () => {
    const report = await reportOf(30_000);
    const whole = { ...report, groups: report.groups.map(({ partitions: _, ...g }) => g) };
    expect(bytes(whole)).toBeGreaterThan(LAMBDA_RESPONSE);

    const store = memoryRuns();
    const first = await reconcileNowAnswer(
      report,
      { after: undefined, limit: GROUP_PAGES.defaultLimit },
      store,
      link,
    );
    expect(first.groups).toHaveLength(GROUP_PAGES.defaultLimit);
    expect(first.groupCount).toBe(30_000);
    expect(first.next).not.toBeNull();
    expect(bytes(first)).toBeLessThan(LAMBDA_RESPONSE);

    const seen = (first.groups as Array<{ group: string }>).map((g) => g.group);
    let next = first.next;
    let pages = 1;
    let largest = 0;
    while (next !== null) {
      const request: PageRequest = {
        after: decodeCursor(cursorOf(next) ?? ''),
        limit: GROUP_PAGES.maxLimit,
      };
      const page = await reconcileNextAnswer(request, store, link);
      largest = Math.max(largest, bytes(page));
      seen.push(...(page.groups as Array<{ group: string }>).map((g) => g.group));
      next = page.next;
      pages++;
    }
    expect(pages).toBe(1 + Math.ceil((30_000 - 1000) / GROUP_PAGES.maxLimit));
    expect(largest).toBeLessThan(LAMBDA_RESPONSE);
    expect(seen).toEqual(report.groups.map((g) => g.group));
    expect(store.runs.size).toBe(1);
  });

  it('keeps nothing for an answer of one page, and says the next page of a run no longer kept is gone (404 naming cursor)', async () => {
    const report = await reportOf(3);
    const store = memoryRuns();
    const answer = await reconcileNowAnswer(report, { after: undefined, limit: 3 }, store, link);
    expect(answer.next).toBeNull();
    expect(answer.groups).toHaveLength(3);
    expect(store.runs.size).toBe(0);
    const gone = reconcileNextAnswer({ after: { run: 'old', at: 0 }, limit: 2 }, store, link);
    await expect(gone).rejects.toThrow(NotFoundError);
    await expect(gone).rejects.toMatchObject({ field: 'cursor' });
    await expect(
      reconcileNextAnswer({ after: { group: 'x' }, limit: 2 }, store, link),
    ).rejects.toThrow(InvalidInputError);
  });
});

describe('restore answers by pages', () => {
  /** A plan returning a group on `n` partitions of 249-character topics from 500 to 1000. */
  const planOf = (n: number) =>
    planRestore(
      'g'.repeat(255),
      Array.from({ length: n }, (_, i) => ({
        group: 'g'.repeat(255),
        key: `${'t'.repeat(244)}-${String(Math.floor(i / 1000)).padStart(4, '0')}#${i % 1000}`,
        version: 1,
        window: [
          {
            observedAt: 1_000,
            committed: 1_000_000_000_000,
            logStart: 0,
            logEnd: 2_000_000_000_000,
          },
          { observedAt: 2_000, committed: 500_000_000_000, logStart: 0, logEnd: 2_000_000_000_000 },
        ],
      })),
    );

  it('pages a dry run and an execution of 25,000 partitions (the whole answer over 6 MB) under 6 MB, every partition once', () => {
    const plan = planOf(25_000);
    const record = {
      group: plan.group,
      executedAt: '2026-11-30T12:00:00.000Z',
      partitions: plan.partitions.map((p) => ({
        topic: p.topic,
        partition: p.partition,
        before: p.current,
        after: p.target,
      })),
    };
    expect(bytes({ dryRun: false, ...plan, executed: record })).toBeGreaterThan(LAMBDA_RESPONSE);

    const max: PageRequest = { after: undefined, limit: PARTITION_PAGES.maxLimit };
    const first = { ...planAnswer(plan, max, link), ...executedAnswer(record, max, link) };
    expect(bytes(first)).toBeLessThan(LAMBDA_RESPONSE);
    expect(first.partitionCount).toBe(25_000);

    const planned = [...first.partitions];
    let next = planAnswer(plan, max, link).next;
    while (next !== null) {
      const page = planAnswer(
        plan,
        { after: decodeCursor(cursorOf(next) ?? ''), limit: max.limit },
        link,
      );
      expect(bytes(page)).toBeLessThan(LAMBDA_RESPONSE);
      planned.push(...page.partitions);
      next = page.next;
    }
    expect(planned).toEqual(plan.partitions);

    const executed = [...first.executed.partitions];
    next = first.next;
    while (next !== null) {
      const after = decodeCursor(cursorOf(next) ?? '');
      expect(after).toMatchObject({ executedAt: record.executedAt });
      const page = executedAnswer(record, { after, limit: max.limit }, link);
      executed.push(...page.executed.partitions);
      next = page.next;
    }
    expect(executed).toEqual(record.partitions);
  });
});

describe('audit answers by pages', () => {
  const group = (g: number) => `${g}-${'g'.repeat(250)}`;
  /** A stream with every list full (LIST_CAP items) at the longest names, 10 groups. */
  const fullStream = (s: number) =>
    fullFindings(`${String(s).padStart(4, '0')}-${'s'.repeat(244)}`, group);

  it('answers a topic of 200 streams with every list full (the whole report over 6 MB) in pages under 6 MB, every stream once', () => {
    const report = {
      ...auditReportOf(
        't'.repeat(249),
        Array.from({ length: 200 }, (_, s) => fullStream(s)),
        {
          scanned: 9_000_000,
          scannedTotal: 9_000_000_000,
          checkpoint: Array.from({ length: 1000 }, (_, partition) => ({
            partition,
            next: 9_000_000,
          })),
        },
      ),
      auditId: 'a'.repeat(36),
    };
    expect(bytes(report)).toBeGreaterThan(LAMBDA_RESPONSE);
    // ~451,000 bytes: 25 of them (the largest limit) would be 11 MB, so a page ends by its bytes.
    expect(bytes(report.streams[0])).toBeGreaterThan(440_000);

    const seen: string[] = [];
    let after: unknown;
    let pages = 0;
    let largest = 0;
    do {
      const { report: page, next } = reportPage(report, { after, limit: STREAM_PAGES.maxLimit });
      const size = bytes({ ...page, next: link(next) });
      expect(size).toBeLessThan(LAMBDA_RESPONSE);
      largest = Math.max(largest, size);
      expect(page.streamCount).toBe(200);
      seen.push(...page.streams.map((s) => s.stream));
      after = next === undefined ? undefined : decodeCursor(next);
      pages++;
    } while (after !== undefined);
    // Pages end by their bytes before the limit, and are full up to them.
    expect(pages).toBeGreaterThan(200 / STREAM_PAGES.maxLimit);
    expect(largest).toBeGreaterThan(LAMBDA_RESPONSE - 600_000);
    expect(seen).toEqual(report.streams.map((s) => s.stream));
  });
});
