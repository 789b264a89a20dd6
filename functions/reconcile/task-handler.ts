// Reconcile on an EventBridge schedule or as a Step Functions task: the input is ignored beyond
// its shape (a scheduled event or `{}`). The output is a summary of bounded size (counts, the
// groups with problems, where the per-group reports are stored): the whole report grows ~600
// bytes a partition and would exceed Step Functions' 256 KiB task result past ~430 partitions.
import { summarizeReconcile } from '../core/reconcile-summary.js';
import { log } from '../platform/log.js';
import { taskHandler } from '../platform/task.js';
import { publishReconcileMetrics } from './metrics.js';
import { reconcileRuntime } from './runtime.js';

export const handler = taskHandler(async () => {
  const rt = await reconcileRuntime();
  const { report, notified } = await rt.reconcile();
  const summary = summarizeReconcile(report, rt.config.tables.reconcileReports);
  log('info', 'reconcile run', {
    complete: report.complete,
    groups: summary.groups,
    adminCalls: report.adminCalls,
    errors: summary.problems.filter((g) => g.status === 'ERR').map((g) => g.group),
    mappings: summary.mappings,
    ...(notified && { notifications: notified }),
  });
  publishReconcileMetrics(report);
  return summary;
});
