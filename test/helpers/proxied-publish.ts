import { vi } from 'vitest';
import { type DynamoDbProxy, startDynamoDbProxy } from './dynamodb-proxy.js';
import { httpEvent } from './http-event.js';
import { testKafka } from './kafka.js';
import { createTopic, loadHandlers } from './publish-client.js';
import { usePublishEnv } from './publish-env.js';

/**
 * The publish handlers on DynamoDB through a fault proxy (`startDynamoDbProxy`) and a fresh topic
 * of one partition; ledger first (the audit's horizon 0: holes judged at once, no leases) unless
 * `ledgerFirst: false` asks for the default fast path.
 */
export async function startProxiedPublish(
  dynamodbEndpoint: string,
  clientId: string,
  timeoutMs: number,
  { ledgerFirst = true }: { ledgerFirst?: boolean } = {},
): Promise<{
  proxy: DynamoDbProxy;
  env: Record<string, string>;
  topic: string;
  api: Awaited<ReturnType<typeof loadHandlers>>;
}> {
  const proxy = await startDynamoDbProxy(dynamodbEndpoint);
  if (!ledgerFirst) delete process.env.TALLY_AUDIT_HORIZON_SECONDS;
  const env = await usePublishEnv({
    DYNAMODB_ENDPOINT: proxy.endpoint,
    TALLY_DYNAMODB_TIMEOUT_MS: String(timeoutMs),
    ...(ledgerFirst && { TALLY_AUDIT_HORIZON_SECONDS: '0' }),
  });
  const admin = testKafka(`${clientId}-admin`).admin();
  await admin.connect();
  const topic = await createTopic(admin, 1);
  await admin.disconnect();
  vi.resetModules();
  return { proxy, env, topic, api: await loadHandlers() };
}

/** The lookup route's answer for one seq of a stream: its status and parsed body. */
export async function lookupSeq(
  api: Awaited<ReturnType<typeof loadHandlers>>,
  clusterId: string,
  stream: string,
  seq: number,
) {
  const response = await api.lookup(
    httpEvent({ pathParameters: { cluster_id: clusterId }, query: { stream, seq: String(seq) } }),
  );
  return { status: response.statusCode, body: JSON.parse(response.body) };
}
