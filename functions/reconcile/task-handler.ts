// Reconcile on an EventBridge schedule or as a Step Functions task: the input is ignored beyond
// its shape (a scheduled event or `{}`); the output is the run's report.
import type { ReconcileReport } from '../core/reconcile.js';
import { log } from '../platform/log.js';
import { taskHandler } from '../platform/task.js';
import { publishReconcileMetrics } from './metrics.js';
import { reconcileRuntime } from './runtime.js';

export const handler = taskHandler<unknown, ReconcileReport>(async () => {
  const rt = await reconcileRuntime();
  const report = await rt.reconciler.run();
  log('info', 'reconcile run', {
    complete: report.complete,
    groups: report.groups.length,
    adminCalls: report.adminCalls,
    errors: report.groups.filter((g) => g.status === 'ERR').map((g) => g.group),
    mappings: { ...report.mappings, details: undefined },
  });
  publishReconcileMetrics(report);
  return report;
});
