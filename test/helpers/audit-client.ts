import type { Kafka } from 'kafkajs';
import { expect, inject } from 'vitest';
import type { AuditReport } from '../../functions/core/audit/ports.js';
import { httpEvent, lambdaContext } from './http-event.js';
import type { ReadRecord } from './publish-client.js';

/**
 * An audit of `topic` through the audit's HTTP handler (POST on the test cluster), which must
 * answer 200. Imported on first use: the caller's environment (usePublishEnv) is set by then.
 */
export async function auditNow(
  topic: string,
  groups?: string[],
  remainingMs?: number,
): Promise<AuditReport> {
  const { handler } = await import('../../functions/audit/http-handler.js');
  const response = (await handler(
    httpEvent({
      pathParameters: { cluster_id: inject('kafkaClusterId') },
      body: JSON.stringify({ topic, ...(groups && { groups }) }),
    }),
    lambdaContext(remainingMs),
  )) as { statusCode: number; body: string };
  expect(response.statusCode, response.body).toBe(200);
  return JSON.parse(response.body) as AuditReport;
}

/**
 * The same record sent again to its partition by a new producer session, as a retry across a
 * cold start would: key, value and `tally.*` headers kept, `tally.session` the new one.
 */
export async function resend(
  kafka: Kafka,
  topic: string,
  record: ReadRecord | undefined,
  session: string,
): Promise<void> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    await producer.send({
      topic,
      acks: -1,
      messages: [
        {
          partition: record?.partition ?? 0,
          key: record?.key ?? null,
          value: record?.value ?? null,
          headers: { ...record?.headers, 'tally.session': session },
        },
      ],
    });
  } finally {
    await producer.disconnect();
  }
}
