// POST /v3/clusters/{cluster_id}/audits — audits a topic now: `{topic, groups?}` → the report,
// stored under its `auditId`.
import { InvalidInputError } from '../core/errors.js';
import { isPlainObject, rejectUnknownFields } from '../core/record-input.js';
import { topicNameProblem } from '../core/topic-names.js';
import { httpHandler, json, jsonBody, pathParameter, requireCluster } from '../platform/http.js';
import { auditRuntime } from './runtime.js';

function parseRequest(body: unknown): { topic: string; groups: string[] | undefined } {
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

export const handler = httpHandler(async (event, context) => {
  const rt = await auditRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  requireCluster(clusterId, await rt.clusterId());
  const request = parseRequest(jsonBody(event));
  return json(
    200,
    await rt.auditAndStore(
      request.topic,
      request.groups ?? rt.config.groups,
      context.getRemainingTimeInMillis(),
    ),
  );
});
