// POST /v3/clusters/{cluster_id}/audits — audits a topic now: `{topic, groups?}` → the report,
// stored under its `auditId`.
import { InvalidInputError, NotFoundError } from '../core/errors.js';
import { isPlainObject, rejectUnknownFields } from '../core/record-input.js';
import { topicNameProblem } from '../core/topic-names.js';
import { bodyBytes, httpHandler, json, pathParameter } from '../platform/http.js';
import { auditRuntime } from './runtime.js';

function parseRequest(text: string): { topic: string; groups: string[] | undefined } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new InvalidInputError('body: not valid JSON', { field: 'body' });
  }
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

export const handler = httpHandler(async (event) => {
  const rt = await auditRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  if (clusterId !== (await rt.clusterId())) {
    throw new NotFoundError(`cluster_id: cluster ${clusterId} not found`, { field: 'cluster_id' });
  }
  const request = parseRequest(bodyBytes(event).toString('utf8'));
  return json(200, await rt.auditAndStore(request.topic, request.groups ?? rt.config.groups));
});
