// POST /v3/clusters/{cluster_id}/audits — audits a topic now: `{topic, groups?}` → the report,
// stored under its `auditId`, with `limit` of its streams (report-pages.ts); `next` reads the
// rest from the stored report (GET /v3/clusters/{cluster_id}/audits/{audit_id}?cursor=…).
import { httpHandler, json } from '../platform/http.js';
import { jsonBody, pathParameter, requireCluster } from '../platform/http-event.js';
import { nextLink, pageRequest } from '../platform/http-pages.js';
import { reportPage, STREAM_PAGES } from './report-pages.js';
import { parseAuditRequest } from './request.js';
import { auditRuntime } from './runtime.js';

export const handler = httpHandler('admin', async (event, context) => {
  const rt = await auditRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  requireCluster(clusterId, await rt.clusterId());
  const request = parseAuditRequest(jsonBody(event));
  const page = pageRequest(event, { ...STREAM_PAGES, cursorless: true });
  const stored = await rt.auditAndStore(
    request.topic,
    request.groups ?? rt.config.groups,
    context.getRemainingTimeInMillis(),
  );
  const { report, next } = reportPage(stored, page);
  const path = `/v3/clusters/${clusterId}/audits/${stored.auditId}`;
  return json(200, { ...report, next: nextLink(event, path, next, page.limit) ?? null });
});
