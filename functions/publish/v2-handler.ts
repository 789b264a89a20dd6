// POST /topics/{topic_name} — REST Proxy v2 / Strimzi HTTP bridge produce, for clients that
// predate v3: `{records: [...]}` → `{offsets: [...]}`.
import { charsetDecoder } from '../core/rest-proxy/content-type.js';
import { v2ResponseBody } from '../core/rest-proxy/reports.js';
import { parseV2Body, v2Format } from '../core/rest-proxy/v2-input.js';
import { InvalidInputError } from '../core/shared/errors.js';
import { httpHandler } from '../platform/http.js';
import { publish } from '../publishing/publish.js';
import { publishRuntime } from '../publishing/runtime.js';
import { bodyValues, readPublishEvent, requestOptions } from './request.js';

export const handler = httpHandler('publish', async (event, context, caller) => {
  const read = readPublishEvent(event);
  const rt = await publishRuntime();
  const { format, charset } = v2Format(read.contentType);
  charsetDecoder(charset);
  const options = requestOptions(read, context, rt, caller);
  const values = bodyValues(read, rt, charset);
  if (values.length !== 1) {
    throw new InvalidInputError('body: must be exactly one JSON object {records: [...]}', {
      field: 'body',
    });
  }
  const records = parseV2Body(values[0], format, rt.config.maxBatchEntries);
  const clusterId = await rt.catalog.clusterId(options.deadline);
  return publish(
    rt,
    { ...options, records },
    (result) => ({
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      body: v2ResponseBody(clusterId, result),
    }),
    { answer: { route: 'v2', clusterId } },
  );
});
