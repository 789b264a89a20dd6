// POST /v3/clusters/{cluster_id}/topics/{topic_name}/records — REST Proxy v3 produce: one record
// object, or several concatenated (streaming), each answered by a report line.
import { UnprocessableInputError } from '../core/errors.js';
import { parseRecordOrError } from '../core/record-input.js';
import { httpStatusOf, produceResponseLines, recordReport } from '../core/reports.js';
import { httpHandler } from '../platform/http.js';
import { beginV3Produce, runPublish } from './request.js';

export const handler = httpHandler('publish', async (event, context, caller) => {
  const { rt, clusterId, options, values } = await beginV3Produce(event, context, caller);
  if (values.length === 0) {
    throw new UnprocessableInputError('body: at least one record is required', { field: 'body' });
  }
  const records = values.map((value) => parseRecordOrError(value));
  return runPublish(rt, { ...options, records }, context, (result) => {
    const first = result.results[0];
    if (first === undefined || result.results.length > 1) {
      const body = produceResponseLines(clusterId, result);
      return { statusCode: 200, headers: { 'content-type': 'application/json' }, body };
    }
    // One record: its report's code is the response's status.
    const single = recordReport(clusterId, result, first);
    const retryAfter = single.error_code === 503 ? { 'retry-after': '1' } : {};
    return {
      statusCode: httpStatusOf(single.error_code),
      headers: { 'content-type': 'application/json', ...retryAfter },
      body: `${JSON.stringify(single)}\r\n`,
    };
  });
});
