// POST /v3/clusters/{cluster_id}/reconcile — runs reconcile now and returns what it found and
// repaired in words (`found`, `repaired`: core/reconcile/run-text.ts) and its report, each
// group without its partitions: those grow with the cluster (~600 bytes each, past Lambda's 6 MB
// response at ~10,000), and each group's are read from its consumer-group route.
import { describeRun } from '../core/reconcile/run-text.js';
import { httpHandler, json } from '../platform/http.js';
import { pathParameter, requireCluster } from '../platform/http-event.js';
import { reconcileRuntime } from '../reconciling/runtime.js';

export const handler = httpHandler('admin', async (event) => {
  const rt = await reconcileRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  requireCluster(clusterId, await rt.source.clusterId());
  const { report } = await rt.reconcile();
  // In words first (what it found, what it repaired), then the report as it always was.
  return json(200, {
    ...describeRun(report),
    ...report,
    groups: report.groups.map(({ partitions: _, ...group }) => group),
  });
});
