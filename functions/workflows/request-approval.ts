// Step Functions task (`lambda:invoke.waitForTaskToken`): records that a workflow waits for a
// person's decision, under a short approval token the person uses instead of the long task token:
// `POST /v3/clusters/{cluster_id}/approvals/{token}`. The workflow waits until then.
import { randomBytes } from 'node:crypto';
import { InvalidInputError } from '../core/shared/errors.js';
import { isPlainObject } from '../core/shared/input-checks.js';
import { log } from '../platform/log.js';
import { taskHandler } from '../platform/task.js';
import { workflowRuntime } from './runtime.js';

export const handler = taskHandler<unknown, { approvalToken: string }>(async (input) => {
  if (!isPlainObject(input) || typeof input.token !== 'string' || input.token === '') {
    throw new InvalidInputError('token: the task token ($$.Task.Token) is required', {
      field: 'token',
    });
  }
  if (typeof input.workflow !== 'string' || !isPlainObject(input.subject)) {
    throw new InvalidInputError('workflow and subject: what waits, and what is to be approved', {
      field: isPlainObject(input.subject) ? 'workflow' : 'subject',
    });
  }
  const rt = await workflowRuntime();
  const approvalToken = randomBytes(18).toString('base64url');
  await rt.approvals.create({
    approvalId: approvalToken,
    taskToken: input.token,
    workflow: input.workflow,
    execution: typeof input.execution === 'string' ? input.execution : undefined,
    subject: input.subject,
    state: 'PENDING',
    requestedAt: new Date().toISOString(),
  });
  const clusterId = await rt.clusterId();
  log('info', 'approval requested', {
    workflow: input.workflow,
    execution: input.execution,
    approve: `POST /v3/clusters/${clusterId}/approvals/${approvalToken}`,
  });
  return { approvalToken };
});
