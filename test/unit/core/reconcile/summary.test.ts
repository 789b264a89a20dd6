import { describe, expect, it } from 'vitest';
import type { GroupReport } from '../../../../functions/core/reconcile/ports.js';
import type { ReconcileReport } from '../../../../functions/core/reconcile/reconciler.js';
import {
  PROBLEM_GROUPS_SHOWN,
  summarizeReconcile,
  UNREADABLE_SHOWN,
} from '../../../../functions/core/reconcile/summary.js';

// Reconcile's task result: counts and the worst groups, the same size for 10 groups or 10,000.

const group = (i: number, status: GroupReport['status'], affected = 0): GroupReport => ({
  group: `g-${String(i).padStart(5, '0')}`,
  state: 'Stable',
  status,
  complete: 1,
  partitionCount: 10,
  maxLag: 0,
  totalLag: 0,
  maxTimeLagSeconds: 0,
  anomalies: affected ? { REWIND: affected } : {},
  partitions: [],
});

const report = (groups: GroupReport[], unreadable: string[] = []): ReconcileReport => ({
  runAt: '2026-11-30T12:00:00.000Z',
  complete: unreadable.length === 0,
  unreadable,
  adminCalls: 7,
  groups,
  mappings: {
    written: 2,
    changed: 0,
    removed: 1,
    keptNewer: 0,
    details: groups.map((g) => ({ action: 'written', pk: g.group, sk: 'x' })),
  },
  historyConflicts: 0,
});

describe('summarizeReconcile', () => {
  it('counts every group and partition and names where each group report is stored', () => {
    const summary = summarizeReconcile(report([group(1, 'OK'), group(2, 'WARN', 3)]), 'reports');
    expect(summary).toMatchObject({
      groups: 2,
      partitions: 20,
      statuses: { OK: 1, WARN: 1, ERR: 0 },
      anomalies: { REWIND: 3 },
      mappings: { written: 2, changed: 0, removed: 1, keptNewer: 0 },
      reports: { table: 'reports', key: { sk: 'report#2026-11-30T12:00:00.000Z' } },
    });
    expect(summary.mappings).not.toHaveProperty('details');
  });

  it('names the worst groups first (errors, then most partitions affected) and counts the rest', () => {
    const groups = Array.from({ length: 10_000 }, (_, i) =>
      group(i, i % 3 === 0 ? 'OK' : i % 3 === 1 ? 'WARN' : 'ERR', i % 7),
    );
    const unreadable = Array.from({ length: 500 }, (_, i) => `group g-${i}: describe failed`);
    const small = JSON.stringify(summarizeReconcile(report(groups.slice(0, 10)), 'r')).length;
    const summary = summarizeReconcile(report(groups, unreadable), 'r');
    expect(summary.problems).toHaveLength(PROBLEM_GROUPS_SHOWN);
    expect(summary.problemsNotShown).toBe(6_666 - PROBLEM_GROUPS_SHOWN);
    expect(summary.problems.every((p) => p.status === 'ERR')).toBe(true);
    expect(summary.problems[0]?.anomalies.REWIND).toBe(6);
    expect(summary.unreadable).toEqual({
      count: 500,
      first: unreadable.slice(0, UNREADABLE_SHOWN),
    });
    expect(JSON.stringify(summary).length).toBeLessThan(small + 8_000);
  });
});
