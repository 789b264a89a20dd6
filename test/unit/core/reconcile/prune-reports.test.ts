import { describe, expect, it } from 'vitest';
import { pruneReports } from '../../../../functions/core/reconcile/prune-reports.js';
import { memoryReports } from '../../../helpers/reconcile-stores.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const R = 14 * DAY;
const T0 = Date.parse('2026-01-01T00:00:00Z');

describe('pruneReports', () => {
  it('drains a gone group within the budget, run after run, and forgets it only when drained', async () => {
    const reports = memoryReports();
    for (let i = 0; i < 250; i++) {
      await reports.saveGroupReport('gone', T0 + i * HOUR, { i }, { i });
    }
    await reports.markReported('gone', T0);
    const at = T0 + 40 * DAY;
    const options = { retentionMs: R, pruneBudget: 100 };
    expect(await pruneReports(reports, [], at, options)).toEqual({ reports: 100, groups: 0 });
    expect(await pruneReports(reports, [], at, options)).toEqual({ reports: 100, groups: 0 });
    expect(await pruneReports(reports, [], at, options)).toEqual({ reports: 50, groups: 1 });
    expect(reports.table.count).toBe(0);
  });

  it('keeps a live group to the retention and refreshes its index mark every half retention', async () => {
    const reports = memoryReports();
    const options = { retentionMs: R, pruneBudget: 100 };
    for (let at = T0; at < T0 + 30 * DAY; at += 6 * HOUR) {
      await reports.saveGroupReport('live', at, {}, {});
      await pruneReports(reports, ['live'], at, options);
      const marked = (await reports.reportedGroups()).get('live')?.markedAt ?? 0;
      expect(at - marked).toBeLessThan(R / 2);
    }
    // 14 days of a report every 6 hours, the newest included; plus latest and the index entry.
    expect(reports.table.count).toBe(14 * 4 + 1 + 2);
  });

  it('does not forget a gone group before 1.5 × the retention after its mark', async () => {
    const reports = memoryReports();
    await reports.saveGroupReport('quiet', T0, {}, {});
    await reports.markReported('quiet', T0);
    await pruneReports(reports, [], T0 + 1.5 * R, { retentionMs: R, pruneBudget: 100 });
    expect(await reports.latestGroupReport('quiet')).toBeDefined();
    await pruneReports(reports, [], T0 + 1.5 * R + 1, { retentionMs: R, pruneBudget: 100 });
    expect(await reports.latestGroupReport('quiet')).toBeUndefined();
    expect(reports.table.count).toBe(0);
  });
});
