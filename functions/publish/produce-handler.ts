// POST /v3/clusters/{cluster_id}/topics/{topic_name}/records — REST Proxy v3 produce: one record
// object, or several concatenated (streaming), each answered by a report line. As in REST Proxy,
// a record's problem is its line's error_code and the answer is 200 (ProduceAction.java streams
// every record's result or error); only a lone record that was not written for a reason on
// Tally's side (5xx: not sent, unknown, refused) makes the status, so HTTP retry logic sees it.

import { parsedRecordOrError } from '../core/rest-proxy/record-input.js';
import { httpStatusOf, produceResponseLines, recordReport } from '../core/rest-proxy/reports.js';
import { UnprocessableInputError } from '../core/shared/errors.js';
import { httpHandler } from '../platform/http.js';
import { publish } from '../publishing/publish.js';
import { beginV3Produce } from './request.js';

/** This route's own import of the schema codecs: a chunk packed with this function only. */
const codecs = () => import('./produce-handler.schema.js');

export const handler = httpHandler('publish', async (event, context, caller) => {
  const { rt, clusterId, options, values: parse } = await beginV3Produce(event, context, caller);
  const values = parse();
  if (values.length === 0) {
    // REST Proxy: Errors.invalidPayloadException("Null input provided. Data is required."), 42206.
    throw new UnprocessableInputError('body: at least one record is required', {
      field: 'body',
      errorCode: 42206,
    });
  }
  // With a registry, keys and values with a schema are serialized by publish, before any seq.
  const schemas = rt.schemaEncoder !== undefined;
  const records = values.map((value) => parsedRecordOrError(value, '', undefined, schemas));
  return publish(
    rt,
    { ...options, records },
    (result) => {
      const first = result.results[0];
      const single =
        first !== undefined && result.results.length === 1
          ? recordReport(clusterId, result, first)
          : undefined;
      if (single === undefined || httpStatusOf(single.error_code) < 500) {
        const body = produceResponseLines(clusterId, result);
        return { statusCode: 200, headers: { 'content-type': 'application/json' }, body };
      }
      const retryAfter = single.error_code === 503 ? { 'retry-after': '1' } : {};
      return {
        statusCode: httpStatusOf(single.error_code),
        headers: { 'content-type': 'application/json', ...retryAfter },
        body: `${JSON.stringify(single)}\r\n`,
      };
    },
    { codecs, answer: { route: 'stream', clusterId } },
  );
});
