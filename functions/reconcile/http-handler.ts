// POST /v3/clusters/{cluster_id}/reconcile — runs reconcile now and returns its report.
import { httpHandler, json, pathParameter, requireCluster } from '../platform/http.js';
import { reconcileRuntime } from './runtime.js';

export const handler = httpHandler('admin', async (event) => {
  const rt = await reconcileRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  requireCluster(clusterId, await rt.source.clusterId());
  return json(200, await rt.reconciler.run());
});
