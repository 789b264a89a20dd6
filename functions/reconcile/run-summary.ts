// One reconcile run as a task answers it: the run (all groups, or a fan-out child's shard), its
// log line and metrics, and the bounded summary (reconcile-summary.ts).
import type { GroupScope } from '../core/reconcile/group-shards.js';
import { type ReconcileSummary, summarizeReconcile } from '../core/reconcile/summary.js';
import { log } from '../platform/log.js';
import type { ReconcileRuntime } from '../reconciling/runtime.js';
import { publishReconcileMetrics } from './metrics.js';

export async function reconcileSummarized(
  rt: ReconcileRuntime,
  scope?: GroupScope,
  logged: Record<string, unknown> = {},
): Promise<ReconcileSummary> {
  const { report, notified } = await rt.reconcile(scope);
  const summary = summarizeReconcile(report, rt.config.tables.reconcileReports);
  log('info', 'reconcile run', {
    ...logged,
    complete: report.complete,
    groups: summary.groups,
    adminCalls: report.adminCalls,
    errors: summary.problems.filter((g) => g.status === 'ERR').map((g) => g.group),
    mappings: summary.mappings,
    ...(notified && { notifications: notified }),
  });
  publishReconcileMetrics(report);
  return summary;
}
