// POST /v3/clusters/{cluster_id}/reconcile — runs reconcile now and returns its report.
import { NotFoundError } from '../core/errors.js';
import { httpHandler, json, pathParameter } from '../platform/http.js';
import { reconcileRuntime } from './runtime.js';

export const handler = httpHandler(async (event) => {
  const rt = await reconcileRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  if (clusterId !== (await rt.source.clusterId())) {
    throw new NotFoundError(`cluster_id: cluster ${clusterId} not found`, { field: 'cluster_id' });
  }
  return json(200, await rt.reconciler.run());
});
