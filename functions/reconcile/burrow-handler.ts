// GET /v3/kafka/{cluster}/consumer/{group}/status and /lag — Burrow-compatible reads of the
// latest reconcile report, so Burrow dashboards keep working.
import { burrowStatus } from '../core/burrow.js';
import type { GroupReport } from '../core/reconcile.js';
import { httpHandler, idParameter, json, pathParameter } from '../platform/http.js';
import { reconcileRuntime } from './runtime.js';

export const handler = httpHandler('read', async (event) => {
  const rt = await reconcileRuntime();
  const cluster = pathParameter(event, 'cluster');
  const group = idParameter(event, 'group');
  const all = event.rawPath.endsWith('/lag');
  const request = { url: event.rawPath, host: event.requestContext?.domainName ?? '' };
  const report = (await rt.reports.latestGroupReport(group)) as GroupReport | undefined;
  if (cluster !== (await rt.source.clusterId()) || report === undefined) {
    return json(404, {
      error_code: 404,
      error: true,
      message: 'cluster or consumer not found',
      status: {
        cluster,
        group,
        status: 'NOTFOUND',
        complete: 1,
        partitions: [],
        partition_count: 0,
        maxlag: null,
        totallag: 0,
      },
      request,
    });
  }
  return json(200, {
    error: false,
    message: all ? 'consumer lag returned' : 'consumer status returned',
    status: burrowStatus(cluster, report, all),
    request,
  });
});
