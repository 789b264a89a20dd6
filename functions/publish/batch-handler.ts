// POST /v3/clusters/{cluster_id}/topics/{topic_name}/records:batch — REST Proxy v3 batch produce:
// 207 with the entries that were acknowledged and those that were not.
import { parseBatch } from '../core/rest-proxy/batch-input.js';
import { parsePlainBatch } from '../core/rest-proxy/batch-text.js';
import { batchResponseBody } from '../core/rest-proxy/reports.js';
import { InvalidInputError } from '../core/shared/errors.js';
import { httpHandler } from '../platform/http.js';
import { publish } from '../publishing/publish.js';
import type { PublishRuntime } from '../publishing/runtime.js';
import { beginV3Produce } from './request.js';

/** This route's own import of the schema codecs: a chunk packed with this function only. */
const codecs = () => import('./batch-handler.schema.js');

export const handler = httpHandler('publish', async (event, context, caller) => {
  const { rt, clusterId, options, text, values } = await beginV3Produce(event, context, caller);
  // Most batches are compact JSON of STRING or BINARY keys and values: read from the text, the
  // same records as the JSON path reads (batch-text.ts); any other body goes that path.
  const { ids, records } =
    parsePlainBatch(text, rt.config.maxBatchEntries) ?? batchOf(values(), rt);
  return publish(
    rt,
    { ...options, records },
    (result) => ({
      statusCode: 207,
      headers: { 'content-type': 'application/json' },
      body: batchResponseBody(clusterId, ids, result),
    }),
    { codecs, answer: { route: 'batch', clusterId, ids } },
  );
});

/** The batch in the body's JSON values: exactly one object `{entries: [...]}`. */
function batchOf(values: unknown[], rt: PublishRuntime) {
  if (values.length > 1) {
    throw new InvalidInputError('body: must be exactly one JSON object {entries: [...]}', {
      field: 'body',
    });
  }
  // No body at all is REST Proxy's "Request body is empty" (42208), as a JSON null is.
  return parseBatch(values[0] ?? null, rt.config.maxBatchEntries, rt.schemaEncoder !== undefined);
}
