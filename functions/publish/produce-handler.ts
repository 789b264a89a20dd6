// POST /v3/clusters/{cluster_id}/topics/{topic_name}/records — REST Proxy v3 produce: one record
// object, or several concatenated (streaming), each answered by a report line.
import { UnprocessableInputError } from '../core/errors.js';
import { parseRecordOrError } from '../core/record-input.js';
import { httpStatusOf, recordReport } from '../core/reports.js';
import { httpHandler } from '../platform/http.js';
import { beginV3Produce, runPublish } from './request.js';

export const handler = httpHandler('publish', async (event, context) => {
  const { rt, clusterId, options, values } = await beginV3Produce(event, context);
  if (values.length === 0) {
    throw new UnprocessableInputError('body: at least one record is required', { field: 'body' });
  }
  const records = values.map((value) => parseRecordOrError(value));
  return runPublish(rt, { ...options, records }, context, (result) => {
    const reports = result.results.map((record) => recordReport(clusterId, result, record));
    const single = reports.length === 1 ? reports[0] : undefined;
    const retryAfter = single?.error_code === 503 ? { 'retry-after': '1' } : {};
    return {
      statusCode: single ? httpStatusOf(single.error_code) : 200,
      headers: { 'content-type': 'application/json', ...retryAfter },
      body: reports.map((report) => `${JSON.stringify(report)}\r\n`).join(''),
    };
  });
});
