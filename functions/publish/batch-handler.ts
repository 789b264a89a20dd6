// POST /v3/clusters/{cluster_id}/topics/{topic_name}/records:batch — REST Proxy v3 batch produce:
// 207 with the entries that were acknowledged and those that were not.
import { parseBatch } from '../core/batch-input.js';
import { InvalidInputError } from '../core/errors.js';
import { recordReport } from '../core/reports.js';
import { httpHandler, json } from '../platform/http.js';
import { beginV3Produce, runPublish } from './request.js';

export const handler = httpHandler('publish', async (event, context) => {
  const { rt, clusterId, options, values } = await beginV3Produce(event, context);
  if (values.length !== 1) {
    throw new InvalidInputError('body: must be exactly one JSON object {entries: [...]}', {
      field: 'body',
    });
  }
  const { ids, records } = parseBatch(values[0], rt.config.maxBatchEntries);
  return runPublish(rt, { ...options, records }, context, (result) => {
    const successes: object[] = [];
    const failures: object[] = [];
    result.results.forEach((record, i) => {
      const { error_code, ...report } = recordReport(clusterId, result, record);
      if (error_code === 200) successes.push({ id: ids[i], error_code, ...report });
      else failures.push({ id: ids[i], error_code, ...report });
    });
    return json(207, { successes, failures });
  });
});
