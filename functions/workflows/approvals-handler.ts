// GET /v3/clusters/{cluster_id}/approvals — what workflows wait for (token, workflow, execution,
// subject: for offset-repair the group, the stored plan's id and digest, its counts, topics and
// first targets; the plan itself is kept aside, see repair-plan.ts).
// POST /v3/clusters/{cluster_id}/approvals/{token} — a person's decision on one of them:
// `{"decision": "approve" | "reject", "by"?: "…", "reason"?: "…"}`. Approve continues the
// workflow; reject fails its waiting task with `ApprovalRejected`. A token is decided once.

import { InvalidInputError } from '../core/shared/errors.js';
import { isPlainObject, rejectUnknownFields } from '../core/shared/input-checks.js';
import { httpHandler, json } from '../platform/http.js';
import { jsonBody, pathParameter, requireCluster } from '../platform/http-event.js';
import { workflowRuntime } from './runtime.js';

const TOKEN = /^[A-Za-z0-9_-]{16,64}$/;

function parseDecision(body: unknown) {
  if (!isPlainObject(body)) {
    throw new InvalidInputError('body: must be {decision, by?, reason?}', { field: 'body' });
  }
  rejectUnknownFields(body, new Set(['decision', 'by', 'reason']), '');
  const { decision, by, reason } = body;
  if (decision !== 'approve' && decision !== 'reject') {
    throw new InvalidInputError('decision: must be "approve" or "reject"', { field: 'decision' });
  }
  for (const [field, value] of [
    ['by', by],
    ['reason', reason],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value.length > 1000)) {
      throw new InvalidInputError(`${field}: a text of at most 1,000 characters`, { field });
    }
  }
  return {
    decision,
    by: (by as string | undefined) ?? 'unknown',
    reason: reason as string | undefined,
  };
}

export const handler = httpHandler('admin', async (event, _context, caller) => {
  const rt = await workflowRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  requireCluster(clusterId, await rt.clusterId());
  const token = pathParameter(event, 'token');
  if (!TOKEN.test(token)) {
    throw new InvalidInputError('token: an approval token as the workflow logged it', {
      field: 'token',
    });
  }
  const decided = parseDecision(jsonBody(event));
  const { decision, reason } = decided;
  // Who decided is the authenticated caller, whatever the body says.
  const by = caller.id;
  const approval = await rt.approvals.decide(token, {
    state: decision === 'approve' ? 'APPROVED' : 'REJECTED',
    by,
    reason,
  });
  if (decision === 'approve') {
    await rt.tokens.succeed(approval.taskToken, { approved: true, by, reason: reason ?? null });
  } else {
    await rt.tokens.fail(
      approval.taskToken,
      'ApprovalRejected',
      `rejected by ${by}${reason ? `: ${reason}` : ''}`,
    );
  }
  return json(200, {
    token,
    workflow: approval.workflow,
    execution: approval.execution ?? null,
    state: approval.state,
    decidedBy: by,
  });
});

export const list = httpHandler('admin', async (event) => {
  const rt = await workflowRuntime();
  requireCluster(pathParameter(event, 'cluster_id'), await rt.clusterId());
  const pending = await rt.approvals.pending();
  return json(200, {
    approvals: pending.map((a) => ({
      token: a.approvalId,
      workflow: a.workflow,
      execution: a.execution ?? null,
      requestedAt: a.requestedAt,
      subject: a.subject,
    })),
  });
});
