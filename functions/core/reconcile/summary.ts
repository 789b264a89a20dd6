import type { ReconcileReport } from './reconciler.js';

// What a reconcile run returns to its caller (a Step Functions task result, at most 256 KiB):
// counts, and where the full per-group reports are stored, never a list that grows with the
// cluster. The whole report is ~600 bytes a partition: past ~430 partitions it no longer fits.

/** Groups with problems named in a summary; the rest are counted. */
export const PROBLEM_GROUPS_SHOWN = 50;
/** Unreadable things named in a summary; the rest are counted. */
export const UNREADABLE_SHOWN = 20;

export interface ReconcileSummary {
  readonly runAt: string;
  readonly complete: boolean;
  readonly adminCalls: number;
  readonly historyConflicts: number;
  readonly groups: number;
  readonly partitions: number;
  readonly statuses: Readonly<Record<'OK' | 'WARN' | 'ERR', number>>;
  /** Partitions per anomaly (REWIND, LOST, STALL…) over every group. */
  readonly anomalies: Readonly<Record<string, number>>;
  readonly unreadable: { readonly count: number; readonly first: readonly string[] };
  readonly mappings: {
    readonly written: number;
    readonly changed: number;
    readonly removed: number;
    readonly keptNewer: number;
  };
  /** The groups not OK, errors first, then by partitions affected; at most PROBLEM_GROUPS_SHOWN. */
  readonly problems: ReadonlyArray<{
    readonly group: string;
    readonly state: string;
    readonly status: 'WARN' | 'ERR';
    readonly partitionCount: number;
    readonly anomalies: Readonly<Record<string, number>>;
  }>;
  readonly problemsNotShown: number;
  /** Where each group's full report of this run is: its item in `table`. */
  readonly reports: {
    readonly table: string;
    readonly key: { readonly group: '<group id>'; readonly sk: string };
    readonly latest: { readonly group: '<group id>'; readonly sk: 'latest' };
  };
}

export function summarizeReconcile(report: ReconcileReport, table: string): ReconcileSummary {
  const statuses = { OK: 0, WARN: 0, ERR: 0 };
  const anomalies: Record<string, number> = {};
  let partitions = 0;
  for (const g of report.groups) {
    statuses[g.status]++;
    partitions += g.partitionCount;
    for (const [name, n] of Object.entries(g.anomalies))
      anomalies[name] = (anomalies[name] ?? 0) + n;
  }
  const problems = report.groups
    .filter((g) => g.status !== 'OK')
    .map((g) => ({
      group: g.group,
      state: g.state,
      status: g.status as 'WARN' | 'ERR',
      partitionCount: g.partitionCount,
      anomalies: g.anomalies,
      affected: Object.values(g.anomalies).reduce((a, b) => a + b, 0),
    }))
    .sort(
      (a, b) =>
        Number(b.status === 'ERR') - Number(a.status === 'ERR') ||
        b.affected - a.affected ||
        a.group.localeCompare(b.group),
    );
  const { written, changed, removed, keptNewer } = report.mappings;
  return {
    runAt: report.runAt,
    complete: report.complete,
    adminCalls: report.adminCalls,
    historyConflicts: report.historyConflicts,
    groups: report.groups.length,
    partitions,
    statuses,
    anomalies,
    unreadable: {
      count: report.unreadable.length,
      first: report.unreadable.slice(0, UNREADABLE_SHOWN),
    },
    mappings: { written, changed, removed, keptNewer },
    problems: problems.slice(0, PROBLEM_GROUPS_SHOWN).map(({ affected: _, ...p }) => p),
    problemsNotShown: Math.max(0, problems.length - PROBLEM_GROUPS_SHOWN),
    reports: {
      table,
      key: { group: '<group id>', sk: `report#${report.runAt}` },
      latest: { group: '<group id>', sk: 'latest' },
    },
  };
}
