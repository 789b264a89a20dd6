// POST /v3/clusters/{cluster_id}/consumer-groups/{group_id}/restore — plans (dry run, default) or
// executes (`{"execute": true}`, group must be Empty) a return to the last good offsets, `limit`
// partitions a page (run-pages.ts). With the `cursor` of `next` it only reads: a dry run's next
// page is planned again, an execution's is read from its stored record.

import { InvalidInputError, NotFoundError } from '../core/shared/errors.js';
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
import { nextLink, pageRequest } from '../platform/http-pages.js';
import {
  type ExecutedRestore,
  executeRestore,
  requireKnownGroup,
  restorePlan,
} from '../reconciling/restore-actions.js';
import { reconcileRuntime } from '../reconciling/runtime.js';
import { executedAnswer, PARTITION_PAGES, planAnswer, restoreCursor } from './run-pages.js';

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
  const request = pageRequest(event, PARTITION_PAGES);
  const after = request.after === undefined ? undefined : restoreCursor(request.after);
  const path = `/v3/clusters/${clusterId}/consumer-groups/${encodeURIComponent(group)}/restore`;
  const link = (cursor: string | undefined) => nextLink(event, path, cursor, request.limit) ?? null;
  if (after !== undefined && execute)
    throw new InvalidInputError(
      'cursor: a page is only read; leave out `execute` to read the next page of a plan or of an execution',
      { field: 'cursor' },
    );
  if (after?.executedAt !== undefined) {
    const record = await rt.restores.load(group, after.executedAt);
    if (!record)
      throw new NotFoundError(
        `cursor: no restore of group ${group} executed at ${after.executedAt} is kept`,
        { field: 'cursor' },
      );
    const answer = executedAnswer(record as ExecutedRestore, request, link);
    return json(200, { dryRun: false, group, ...answer });
  }
  const plan = await restorePlan(rt, group);
  if (plan.partitions.length === 0) await requireKnownGroup(rt, group);
  const shown = planAnswer(plan, request, link);
  if (!execute) return json(200, { dryRun: true, ...shown });
  const executed = executedAnswer(await executeRestore(rt, plan), request, link);
  return json(200, { dryRun: false, ...shown, ...executed });
});
