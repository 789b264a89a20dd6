// The publish-and-verify workflow's publish task: one record, with its Idempotency-Key, exactly
// as POST /v3/clusters/{cluster_id}/topics/{topic}/records would publish it. An outcome that may
// change on a retry (UNKNOWN, NOT_SENT, 503) is thrown as DependencyUnavailableError, so the
// workflow's Retry sends it again under the same key (the same seq). The output is what Verify
// needs and no more ({idempotencyKey, seq, stream when not the topic} or {idempotencyKey, error}):
// the Map gathers one per record, and it must stay smaller than the record that went in, so the
// gathered outputs fit wherever the execution's input fitted.

import { parseRecord } from '../core/rest-proxy/record-input.js';
import { type ProduceReport, recordReport } from '../core/rest-proxy/reports.js';
import {
  DependencyUnavailableError,
  InvalidInputError,
  UnprocessableInputError,
} from '../core/shared/errors.js';
import { isPlainObject } from '../core/shared/input-checks.js';
import { taskHandler } from '../platform/task.js';
import { publish, publishOptions } from '../publishing/publish.js';
import { publishRuntime } from '../publishing/runtime.js';

export type PublishedRecord =
  | { readonly idempotencyKey: string; readonly seq: number; readonly stream?: string }
  | { readonly idempotencyKey: string; readonly error: number };

export const handler = taskHandler<unknown, PublishedRecord>(async (input, context) => {
  if (!isPlainObject(input) || !isPlainObject(input.item)) {
    throw new InvalidInputError('item: one record {idempotencyKey, stream?, key?, value, …}', {
      field: 'item',
    });
  }
  const { topic } = input;
  const { idempotencyKey, stream, ...record } = input.item;
  if (typeof topic !== 'string') {
    throw new InvalidInputError('topic: the topic to publish to', { field: 'topic' });
  }
  if (typeof idempotencyKey !== 'string') {
    throw new InvalidInputError('item.idempotencyKey: required, so a retry keeps the same seq', {
      field: 'item.idempotencyKey',
    });
  }
  if (stream !== undefined && typeof stream !== 'string') {
    throw new InvalidInputError('item.stream: a stream name', { field: 'item.stream' });
  }
  const rt = await publishRuntime();
  const options = publishOptions(
    { topic, stream, idempotencyKey, timeoutMs: undefined },
    context,
    rt,
    { stream: 'item.stream', idempotencyKey: 'item.idempotencyKey', timeoutMs: 'timeoutMs' },
  );
  const clusterId = await rt.catalog.clusterId(options.deadline);
  const parsed = parseRecord(record, 'item.');
  // The answer is what the Idempotency-Key's item keeps and gives back to every retry as is:
  // the record's report as JSON text in `body`, the form keys stored by earlier versions hold,
  // so a retry of a record published before an upgrade reads its answer the same way.
  const response = await publish(rt, { ...options, records: [parsed] }, (result) => {
    const [first] = result.results;
    const body = first ? JSON.stringify(recordReport(clusterId, result, first)) : '';
    return { statusCode: 200, body };
  });
  if (!response.body) throw new UnprocessableInputError('item: nothing was published');
  const report = JSON.parse(response.body) as ProduceReport;
  if (report.error_code === 503 || report.error_code === 504 || report.outcome === 'NOT_SENT') {
    throw new DependencyUnavailableError(
      `seq ${report.seq ?? '?'} of ${options.stream}: ${report.outcome ?? report.error_code}: ${report.message ?? ''}`,
    );
  }
  if (typeof report.seq !== 'number') return { idempotencyKey, error: report.error_code };
  return {
    idempotencyKey,
    seq: report.seq,
    ...(options.stream !== topic && { stream: options.stream }),
  };
});
