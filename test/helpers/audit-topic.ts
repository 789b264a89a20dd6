import { expect, inject } from 'vitest';
import type { AuditReport } from '../../functions/core/audit/ports.js';
import { httpEvent, lambdaContext } from './http-event.js';

/** Runs the audit of `topic` now, over HTTP in process, and returns its stream's findings. */
export async function auditTopicNow(topic: string, stream = topic) {
  const { handler } = await import('../../functions/audit/http-handler.js');
  const answer = await handler(
    httpEvent({
      pathParameters: { cluster_id: inject('kafkaClusterId') },
      body: JSON.stringify({ topic }),
    }),
    lambdaContext(),
  );
  expect(answer.statusCode, answer.body).toBe(200);
  return (JSON.parse(answer.body ?? '{}') as AuditReport).streams.find((s) => s.stream === stream);
}
