// POST /v3/clusters/{cluster_id}/consumer-groups/{group_id}/acknowledge — an admin acknowledges
// a group's held LOST and OUT_OF_RANGE findings: they read OK from the next run until the
// group's commit changes (core/reconcile/offsets/judge-held.ts). No body.
import { InvalidInputError } from '../core/shared/errors.js';
import { httpHandler, json } from '../platform/http.js';
import { bodyBytes, idParameter, pathParameter, requireCluster } from '../platform/http-event.js';
import { acknowledgeFindings, requireKnownGroup } from '../reconciling/restore-actions.js';
import { reconcileRuntime } from '../reconciling/runtime.js';

export const handler = httpHandler('admin', async (event) => {
  const rt = await reconcileRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  requireCluster(clusterId, await rt.source.clusterId());
  const group = idParameter(event, 'group_id');
  if (bodyBytes(event).toString('utf8').trim() !== '') {
    throw new InvalidInputError('body: acknowledge takes no body', { field: 'body' });
  }
  const acknowledged = await acknowledgeFindings(rt, group, Date.now());
  if (acknowledged.length === 0) await requireKnownGroup(rt, group);
  return json(200, { group, acknowledged });
});
