// POST /v3/clusters/{cluster_id}/reconcile — runs reconcile now and returns what it found and
// repaired in words (`found`, `repaired`: core/reconcile/run-text.ts) and its report, each
// group without its partitions (each group's are read from its consumer-group route), `limit`
// groups a page (run-pages.ts). A longer answer keeps its groups for a day (`runId`) and links
// its `next` page: the same POST with `cursor`, which runs nothing and reads that run's groups.
import { httpHandler, json } from '../platform/http.js';
import { pathParameter, requireCluster } from '../platform/http-event.js';
import { nextLink, pageRequest } from '../platform/http-pages.js';
import { reconcileRuntime } from '../reconciling/runtime.js';
import { GROUP_PAGES, reconcileNextAnswer, reconcileNowAnswer } from './run-pages.js';

export const handler = httpHandler('admin', async (event) => {
  const rt = await reconcileRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  requireCluster(clusterId, await rt.source.clusterId());
  const request = pageRequest(event, GROUP_PAGES);
  const link = (cursor: string | undefined) =>
    nextLink(event, `/v3/clusters/${clusterId}/reconcile`, cursor, request.limit) ?? null;
  if (request.after !== undefined)
    return json(200, await reconcileNextAnswer(request, rt.runPages, link));
  const { report } = await rt.reconcile();
  return json(200, await reconcileNowAnswer(report, request, rt.runPages, link));
});
