// What an audit request must be, over HTTP and as a Step Functions task alike.

import { InvalidInputError } from '../core/shared/errors.js';
import { isPlainObject, rejectUnknownFields } from '../core/shared/input-checks.js';
import { topicNameProblem } from '../core/shared/topic-names.js';

/** `{topic, groups?}`, checked: the topic's name is legal, groups are non-empty strings. */
export function parseAuditRequest(body: unknown): { topic: string; groups: string[] | undefined } {
  if (!isPlainObject(body))
    throw new InvalidInputError('body: must be {topic, groups?}', { field: 'body' });
  rejectUnknownFields(body, new Set(['topic', 'groups']), '');
  const { topic, groups } = body;
  if (typeof topic !== 'string' || topicNameProblem(topic)) {
    throw new InvalidInputError(
      `topic: ${typeof topic === 'string' ? topicNameProblem(topic) : 'required'}`,
      { field: 'topic' },
    );
  }
  if (
    groups !== undefined &&
    (!Array.isArray(groups) || groups.some((g) => typeof g !== 'string' || g === ''))
  ) {
    throw new InvalidInputError('groups: must be a list of consumer group ids', {
      field: 'groups',
    });
  }
  return { topic, groups: groups as string[] | undefined };
}
