// POST /v3/clusters/{cluster_id}/receipts — receipts from consumers outside Lambda: seq runs per
// stream, or counts per time bucket for a consumer that keeps no sequence numbers.
import { InvalidInputError, NotFoundError } from '../core/errors.js';
import { parseReceipts } from '../core/receipts-input.js';
import { bodyBytes, httpHandler, json, pathParameter } from '../platform/http.js';
import { receiptsRuntime } from './runtime.js';

export const handler = httpHandler(async (event) => {
  const rt = await receiptsRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  if (clusterId !== (await rt.clusterId())) {
    throw new NotFoundError(`cluster_id: cluster ${clusterId} not found`, { field: 'cluster_id' });
  }
  let body: unknown;
  try {
    body = JSON.parse(bodyBytes(event).toString('utf8'));
  } catch {
    throw new InvalidInputError('body: not valid JSON', { field: 'body' });
  }
  const input = parseReceipts(body);
  if (input.kind === 'buckets') {
    await rt.store.writeBuckets(input.group, input.topic, input.buckets);
    return json(202, {
      accepted: 'buckets',
      group: input.group,
      topic: input.topic,
      buckets: input.buckets.length,
    });
  }
  await rt.store.writeAll([input.batch]);
  return json(202, {
    accepted: 'seqs',
    group: input.batch.group,
    stream: input.batch.stream,
    records: input.batch.count,
  });
});
