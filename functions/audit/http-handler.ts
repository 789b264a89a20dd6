// POST /v3/clusters/{cluster_id}/audits — audits a topic now: `{topic, groups?}` → the report,
// stored under its `auditId`.
import { httpHandler, json } from '../platform/http.js';
import { jsonBody, pathParameter, requireCluster } from '../platform/http-event.js';
import { parseAuditRequest } from './request.js';
import { auditRuntime } from './runtime.js';

export const handler = httpHandler('admin', async (event, context) => {
  const rt = await auditRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  requireCluster(clusterId, await rt.clusterId());
  const request = parseAuditRequest(jsonBody(event));
  return json(
    200,
    await rt.auditAndStore(
      request.topic,
      request.groups ?? rt.config.groups,
      context.getRemainingTimeInMillis(),
    ),
  );
});
