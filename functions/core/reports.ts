import type { TallyError } from './errors.js';
import { isRetriable, outcomeStatusCode } from './outcomes.js';
import type { PublishResult, RecordResult } from './publish.js';
import type { RecordData } from './record-input.js';

// Shapes publish results as Confluent REST Proxy responses (v3 produce and batch, v2 offsets),
// with Tally's extensions as extra fields: `stream`, `seq`, and `outcome`/`retriable` on errors.

export interface ProduceReport {
  readonly error_code: number;
  readonly [field: string]: unknown;
}

function dataSummary(data: RecordData | undefined) {
  if (data === undefined) return undefined;
  return { type: data.type, size: data.bytes === null ? -1 : data.bytes.length };
}

export function errorReport(error: TallyError): ProduceReport {
  return {
    error_code: error.errorCode,
    message: error.message,
    outcome: 'REJECTED',
    retriable: error.retriable,
  };
}

export function recordReport(
  clusterId: string,
  result: PublishResult,
  record: RecordResult,
): ProduceReport {
  if (record.kind === 'rejected') return errorReport(record.error);
  const { outcome } = record;
  if (outcome.status !== 'ACKED') {
    return {
      error_code: outcomeStatusCode(outcome),
      message: outcome.message,
      outcome: outcome.status,
      retriable: isRetriable(outcome),
      stream: result.stream,
      seq: record.seq,
      partition_id: record.partition,
    };
  }
  const key = dataSummary(record.input.key);
  const value = dataSummary(record.input.value);
  return {
    error_code: 200,
    cluster_id: clusterId,
    topic_name: result.topic,
    partition_id: outcome.partition,
    offset: Number(outcome.offset),
    timestamp: new Date(record.timestamp).toISOString(),
    ...(key && { key }),
    ...(value && { value }),
    stream: result.stream,
    seq: record.seq,
  };
}

/** HTTP status of a report: the first three digits of its error_code (40403 → 404). */
export function httpStatusOf(errorCode: number): number {
  return errorCode >= 1000 ? Math.floor(errorCode / 100) : errorCode;
}

/** v2 / Strimzi bridge: `{offsets: [{partition, offset} | {error_code, error}]}`. */
export function v2Offset(clusterId: string, result: PublishResult, record: RecordResult) {
  const report = recordReport(clusterId, result, record);
  if (report.error_code === 200) {
    return {
      partition: report.partition_id,
      offset: report.offset,
      stream: report.stream,
      seq: report.seq,
    };
  }
  const { message, error_code, ...extensions } = report;
  return { partition: null, offset: null, error_code, error: message, ...extensions };
}
