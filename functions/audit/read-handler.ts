// GET /v3/clusters/{cluster_id}/audits/{audit_id} — a stored audit report.
import { NotFoundError } from '../core/errors.js';
import { httpHandler, json, pathParameter } from '../platform/http.js';
import { auditRuntime } from './runtime.js';

export const handler = httpHandler(async (event) => {
  const rt = await auditRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  const auditId = pathParameter(event, 'audit_id');
  const report = clusterId === (await rt.clusterId()) ? await rt.store.get(auditId) : undefined;
  if (!report)
    throw new NotFoundError(`audit_id: no audit ${auditId} in cluster ${clusterId}`, {
      field: 'audit_id',
    });
  return json(200, { auditId, ...report });
});
