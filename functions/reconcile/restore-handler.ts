// POST /v3/clusters/{cluster_id}/consumer-groups/{group_id}/restore — plans (dry run, default) or
// executes (`{"execute": true}`, group must be Empty) a return to the last good offsets.

import { InvalidInputError } from '../core/shared/errors.js';
import { isPlainObject } from '../core/shared/input-checks.js';
import { httpHandler, json } from '../platform/http.js';
import {
  bodyBytes,
  type HttpEvent,
  idParameter,
  jsonBody,
  pathParameter,
  requireCluster,
} from '../platform/http-event.js';
import { executeRestore, requireKnownGroup, restorePlan } from '../reconciling/restore-actions.js';
import { reconcileRuntime } from '../reconciling/runtime.js';

function executeFlag(event: HttpEvent): boolean {
  if (bodyBytes(event).toString('utf8').trim() === '') return false;
  const body = jsonBody(event);
  if (!isPlainObject(body) || Object.keys(body).some((k) => k !== 'execute')) {
    throw new InvalidInputError('body: only {"execute": true|false} is accepted', {
      field: 'body',
    });
  }
  if (body.execute !== undefined && typeof body.execute !== 'boolean') {
    throw new InvalidInputError('execute: must be true or false', { field: 'execute' });
  }
  return body.execute === true;
}

export const handler = httpHandler('admin', async (event) => {
  const rt = await reconcileRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  requireCluster(clusterId, await rt.source.clusterId());
  const group = idParameter(event, 'group_id');
  const execute = executeFlag(event);
  const plan = await restorePlan(rt, group);
  if (plan.partitions.length === 0) await requireKnownGroup(rt, group);
  if (!execute) return json(200, { dryRun: true, ...plan });
  return json(200, { dryRun: false, ...plan, executed: await executeRestore(rt, plan) });
});
