import { describe, expect, it } from 'vitest';
import type { GroupReport } from '../../../../functions/core/reconcile/ports.js';
import type { ReconcileReport } from '../../../../functions/core/reconcile/reconciler.js';
import { describeRun } from '../../../../functions/core/reconcile/run-text.js';

const group = (
  name: string,
  status: GroupReport['status'],
  anomalies: Record<string, number> = {},
): GroupReport => ({
  group: name,
  state: 'Stable',
  status,
  complete: 1,
  partitionCount: 2,
  maxLag: 0,
  totalLag: 0,
  maxTimeLagSeconds: 0,
  anomalies,
  partitions: [],
});

const report = (overrides: Partial<ReconcileReport> = {}): ReconcileReport => ({
  runAt: '2026-12-02T00:00:00.000Z',
  complete: true,
  unreadable: [],
  adminCalls: 3,
  groups: [],
  mappings: { written: 0, changed: 0, removed: 0, keptNewer: 0, details: [] },
  historyConflicts: 0,
  ...overrides,
});

describe('describeRun: a reconcile run in words', () => {
  it('says what it found, naming the groups not OK, worst first', () => {
    const { found } = describeRun(
      report({
        groups: [group('a', 'OK'), group('billing', 'ERR', { REWIND: 1 }), group('c', 'WARN')],
      }),
    );
    expect(found).toBe(
      '3 consumer groups over 6 partitions: 1 OK, 1 WARN, 1 ERR. billing ERR (REWIND on 1 partition); c WARN. GET /v3/clusters/{cluster_id}/consumer-groups/{group_id} shows a group by partition.',
    );
  });

  it('names at most five groups and counts the rest, and says when the report is partial', () => {
    const groups = Array.from({ length: 8 }, (_, i) => group(`g${i}`, 'ERR', { LOST: 1 }));
    const { found } = describeRun(report({ groups, complete: false, unreadable: ['group x'] }));
    expect(found).toContain('g4 ERR (LOST on 1 partition); and 3 more');
    expect(found).not.toContain('g5 ERR');
    expect(found).toContain('could not read group x: this report is partial');
  });

  it('says what it repaired, or that nothing needed repair, and how offsets are restored', () => {
    const quiet = describeRun(report({ groups: [group('a', 'OK')] }));
    expect(quiet.found).toBe('1 consumer group over 2 partitions: 1 OK, 0 WARN, 0 ERR.');
    expect(quiet.repaired).toMatch(/^nothing needed repair\. Reconcile never moves offsets/);
    const busy = describeRun(
      report({
        mappings: { written: 2, changed: 1, removed: 3, keptNewer: 0, details: [] },
        pruned: { reports: 4, groups: 1, history: 0 },
      }),
    );
    expect(busy.repaired).toMatch(
      /^client-to-group mappings: 2 written, 1 changed, 3 removed; past retention, deleted 4 old reports, 1 gone group and 0 history items\. /,
    );
    expect(busy.repaired).toContain('/consumer-groups/{group_id}/restore');
  });
});
