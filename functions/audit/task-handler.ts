// Audit on an EventBridge schedule or as a Step Functions task: `{topic?, groups?}` (Step
// Functions) or a scheduled event (every topic of TALLY_AUDIT_TOPICS). Returns the reports.
import { InvalidInputError } from '../core/errors.js';
import { isPlainObject } from '../core/record-input.js';
import { taskHandler } from '../platform/task.js';
import { auditRuntime } from './runtime.js';

export const handler = taskHandler<unknown, { audits: Array<{ auditId: string; topic: string }> }>(
  async (input, context) => {
    const rt = await auditRuntime();
    const task = isPlainObject(input) && input.source !== 'aws.events' ? input : {};
    if (task.topic !== undefined && typeof task.topic !== 'string') {
      throw new InvalidInputError('topic: must be a topic name', { field: 'topic' });
    }
    const groups = Array.isArray(task.groups)
      ? task.groups.filter((g): g is string => typeof g === 'string')
      : rt.config.groups;
    const topics = typeof task.topic === 'string' ? [task.topic] : rt.config.topics;
    const audits = [];
    for (const topic of topics) {
      const report = await rt.auditAndStore(topic, groups, context.getRemainingTimeInMillis());
      audits.push({
        auditId: report.auditId,
        topic,
        complete: report.complete,
        scanned: report.scanned,
        streams: report.streams.length,
        settled: report.settled,
      });
    }
    return { audits };
  },
);
