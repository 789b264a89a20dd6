// POST /v3/clusters/{cluster_id}/receipts — receipts from consumers outside Lambda: seq runs per
// stream, or counts per time bucket for a consumer that keeps no sequence numbers.
import { parseReceipts } from '../core/receipts/receipts-input.js';
import { httpHandler, json } from '../platform/http.js';
import { jsonBody, pathParameter, requireCluster } from '../platform/http-event.js';
import { receiptsRuntime } from './runtime.js';

export const handler = httpHandler('receipts', async (event) => {
  const rt = await receiptsRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  requireCluster(clusterId, await rt.clusterId());
  const input = parseReceipts(jsonBody(event));
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
