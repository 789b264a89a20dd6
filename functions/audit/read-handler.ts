// GET /v3/clusters/{cluster_id}/audits/{audit_id} — a stored audit report, as JSON (`limit` of
// its streams from `cursor`: report-pages.ts) or (with `?format=html` or `Accept: text/html`) as
// a page of its streams with charts and the findings by layer (the same `limit` and `cursor`,
// and a "next page" link; a page also ends before Lambda's 6 MB response: report-pages.ts).

import { NotFoundError } from '../core/shared/errors.js';
import { httpHandler, json } from '../platform/http.js';
import { baseUrl, header, idParameter, pathParameter } from '../platform/http-event.js';
import { nextLink, pageRequest } from '../platform/http-pages.js';
import { auditReadRuntime } from './read-runtime.js';
import { htmlReportPage, reportPage, STREAM_PAGES } from './report-pages.js';

export const handler = httpHandler('read', async (event) => {
  const rt = await auditReadRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  const auditId = idParameter(event, 'audit_id');
  const report = clusterId === (await rt.clusterId()) ? await rt.store.get(auditId) : undefined;
  if (!report)
    throw new NotFoundError(`audit_id: no audit ${auditId} in cluster ${clusterId}`, {
      field: 'audit_id',
    });
  const wantsHtml =
    event.queryStringParameters?.format === 'html' ||
    (header(event, 'accept') ?? '').includes('text/html');
  const page = pageRequest(event, STREAM_PAGES);
  const path = `/v3/clusters/${clusterId}/audits/${auditId}`;
  if (wantsHtml) {
    const link = (cursor: string | undefined) => {
      const query = new URLSearchParams({ format: 'html', limit: String(page.limit) });
      if (cursor !== undefined) query.set('cursor', cursor);
      return `${baseUrl(event)}${path}?${query}`;
    };
    return {
      statusCode: 200,
      headers: { 'content-type': 'text/html; charset=utf-8' },
      body: htmlReportPage(report, page, link),
    };
  }
  const { report: shown, next } = reportPage(report, page);
  return json(200, { auditId, ...shown, next: nextLink(event, path, next, page.limit) ?? null });
});
