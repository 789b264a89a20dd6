import type { ReconcileReport } from './reconciler.js';
import { summarizeReconcile } from './summary.js';

// A reconcile run in two sentences a person reads (the reconcile route's `found` and `repaired`):
// what the run saw, and what it changed. Bounded: the groups named are the worst few.

/** Groups not OK named in `found`; the rest are counted. */
export const PROBLEMS_NAMED = 5;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export interface RunText {
  readonly found: string;
  readonly repaired: string;
}

export function describeRun(report: ReconcileReport): RunText {
  const summary = summarizeReconcile(report, '');
  const { OK, WARN, ERR } = summary.statuses;
  const parts = [
    `${plural(summary.groups, 'consumer group')} over ${plural(summary.partitions, 'partition')}: ${OK} OK, ${WARN} WARN, ${ERR} ERR`,
  ];
  const named = summary.problems.slice(0, PROBLEMS_NAMED).map((p) => {
    const anomalies = Object.entries(p.anomalies)
      .map(([name, n]) => `${name} on ${plural(n, 'partition')}`)
      .join(', ');
    return `${p.group} ${p.status}${anomalies ? ` (${anomalies})` : ''}`;
  });
  const more = summary.problems.length - named.length + summary.problemsNotShown;
  if (named.length > 0) parts.push(`${named.join('; ')}${more > 0 ? `; and ${more} more` : ''}`);
  if (summary.unreadable.count > 0) {
    parts.push(
      `could not read ${summary.unreadable.first.slice(0, PROBLEMS_NAMED).join(', ')}${summary.unreadable.count > PROBLEMS_NAMED ? ` and ${summary.unreadable.count - PROBLEMS_NAMED} more` : ''}: this report is partial`,
    );
  }
  const found = `${parts.join('. ')}.${ERR + WARN > 0 ? ' GET /v3/clusters/{cluster_id}/consumer-groups/{group_id} shows a group by partition.' : ''}`;

  const { written, changed, removed, keptNewer } = summary.mappings;
  const repairs: string[] = [];
  if (written + changed + removed > 0) {
    repairs.push(
      `client-to-group mappings: ${written} written, ${changed} changed, ${removed} removed`,
    );
  }
  if (keptNewer > 0) repairs.push(`${keptNewer} kept (re-written by a newer run)`);
  const pruned = report.pruned;
  if (pruned && pruned.reports + pruned.groups + pruned.history > 0) {
    repairs.push(
      `past retention, deleted ${plural(pruned.reports, 'old report')}, ${plural(pruned.groups, 'gone group')} and ${plural(pruned.history, 'history item')}`,
    );
  }
  const offsets =
    'Reconcile never moves offsets: POST /v3/clusters/{cluster_id}/consumer-groups/{group_id}/restore plans (and with {"execute": true} makes) a return to the last good offsets.';
  const repaired = `${repairs.length > 0 ? repairs.join('; ') : 'nothing needed repair'}. ${offsets}`;
  return { found, repaired };
}
