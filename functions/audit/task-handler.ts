// Audit on an EventBridge schedule or as a Step Functions task: `{topic, groups?}` (Step
// Functions) or a scheduled event (every topic of TALLY_AUDIT_TOPICS). Returns the reports.
import { isPlainObject } from '../core/shared/input-checks.js';
import { taskHandler } from '../platform/task.js';
import { parseAuditRequest } from './request.js';
import { auditRuntime } from './runtime.js';
import { type AuditSummary, summarize } from './summary.js';

export const handler = taskHandler<unknown, { audits: AuditSummary[] }>(async (input, context) => {
  const rt = await auditRuntime();
  // A scheduled event audits every topic of TALLY_AUDIT_TOPICS; a task names its topic.
  const scheduled = isPlainObject(input) && input.source === 'aws.events';
  const request = scheduled ? undefined : parseAuditRequest(input);
  const groups = request?.groups ?? rt.config.groups;
  const topics = request ? [request.topic] : rt.config.topics;
  const audits: AuditSummary[] = [];
  for (const topic of topics) {
    const report = await rt.auditAndStore(topic, groups, context.getRemainingTimeInMillis());
    audits.push(summarize(topic, report));
  }
  return { audits };
});
