import type { PublishResult, RecordResult } from '../publish/ports.js';
import type { RecordData } from '../publish/record.js';
import type { TallyError } from '../shared/errors.js';
import { isRetriable, outcomeStatusCode, type RecordOutcome } from '../shared/outcomes.js';

// Shapes publish results as Confluent REST Proxy responses (v3 produce and batch, v2 offsets),
// with Tally's extensions as extra fields: `stream`, `seq`, and `outcome`/`retriable` on errors.

export interface ProduceReport {
  readonly error_code: number;
  readonly [field: string]: unknown;
}

function dataSummary(data: RecordData | undefined) {
  if (data === undefined) return undefined;
  const size = data.bytes === null ? -1 : data.bytes.length;
  // REST Proxy reports the schema a key or value was serialized with, in ProduceResponseData's
  // order: type, subject, schema_id, schema_version, size (each left out when absent).
  return data.schemaId === undefined
    ? { type: data.type, size }
    : {
        type: data.type,
        ...(data.subject !== undefined && { subject: data.subject }),
        schema_id: data.schemaId,
        ...(data.schemaVersion !== undefined && { schema_version: data.schemaVersion }),
        size,
      };
}

/**
 * The most bytes a report's message adds to the function's result, where it is JSON inside the
 * body's JSON string (so a `"` takes 4 bytes, a control character 7). A message is an error's
 * text and may echo input (an unknown field's name) or nest an earlier attempt's: past this it is
 * cut, so every report has a known worst case (answer-bound.ts). The lookup route and the
 * ledger keep the whole text.
 */
export const REPORT_MESSAGE_BYTES = 320;

/** Bytes `text` adds to the function's result as a JSON string inside the body's JSON string. */
export function resultBytesOfString(text: string): number {
  if (isPlainText(text)) return text.length;
  return Buffer.byteLength(JSON.stringify(JSON.stringify(text))) - 6;
}

/**
 * Printable ASCII without `"` or `\`: what JSON.stringify writes as it is, at one byte a
 * character (a batch entry's id always is: batch-input allows [0-9a-zA-Z_-]).
 */
function isPlainText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** JSON.stringify(text), without its escaping scan for text that needs none. */
function jsonString(text: string): string {
  return isPlainText(text) ? `"${text}"` : JSON.stringify(text);
}

/** A message within REPORT_MESSAGE_BYTES, cut at a character with "…" when longer. */
export function reportMessage(message: string): string {
  if (resultBytesOfString(message) <= REPORT_MESSAGE_BYTES) return message;
  let kept = '';
  let bytes = resultBytesOfString('…');
  for (const character of message) {
    const more = resultBytesOfString(character);
    if (bytes + more > REPORT_MESSAGE_BYTES) break;
    kept += character;
    bytes += more;
  }
  return `${kept}…`;
}

export function errorReport(error: TallyError): ProduceReport {
  return {
    error_code: error.errorCode,
    message: reportMessage(error.message),
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
      message: reportMessage(outcome.message),
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
    timestamp: restProxyTimestamp(record.timestamp),
    ...(key && { key }),
    ...(value && { value }),
    stream: result.stream,
    seq: record.seq,
  };
}

/**
 * A record's timestamp as REST Proxy writes it: Jackson's `Instant` (ISO_INSTANT), which leaves
 * out a fraction of zero (`…:01Z`) and writes milliseconds otherwise (`…:01.250Z`). Kafka
 * timestamps are whole milliseconds, so there is never a finer fraction to write.
 */
export function restProxyTimestamp(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
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

/**
 * The v3 batch answer's body, `{successes: [...], failures: [...]}`, each entry `{id, ...report}`:
 * the text JSON.stringify makes of those objects. An ACKED record's entry, nearly every entry of a
 * batch, is written directly (no report object, no copy of it per record); the rest go through
 * `recordReport`.
 */
export function batchResponseBody(
  clusterId: string,
  ids: readonly string[],
  result: PublishResult,
): string {
  // Appended to one text each (fewer intermediate strings than an array joined at the end).
  let successes = '';
  let failures = '';
  const acked = ackedReportWriter(clusterId, result);
  const { results } = result;
  for (let i = 0; i < results.length; i++) {
    const record = results[i] as RecordResult;
    const id = ids[i];
    if (record.kind === 'published' && record.outcome.status === 'ACKED' && id !== undefined) {
      const entry = acked(`{"id":${jsonString(id)},`, record, record.outcome);
      successes = successes === '' ? entry : `${successes},${entry}`;
      continue;
    }
    const { error_code, ...report } = recordReport(clusterId, result, record);
    const entry = JSON.stringify({ id, error_code, ...report });
    if (error_code === 200) successes = successes === '' ? entry : `${successes},${entry}`;
    else failures = failures === '' ? entry : `${failures},${entry}`;
  }
  return `{"successes":[${successes}],"failures":[${failures}]}`;
}

/**
 * The v3 streaming produce answer for several records: one report per line (`\r\n` after each),
 * as JSON.stringify(recordReport(...)) writes them; ACKED reports written directly.
 */
export function produceResponseLines(clusterId: string, result: PublishResult): string {
  const acked = ackedReportWriter(clusterId, result);
  let lines = '';
  for (const record of result.results) {
    const line =
      record.kind === 'published' && record.outcome.status === 'ACKED'
        ? acked('{', record, record.outcome)
        : JSON.stringify(recordReport(clusterId, result, record));
    lines += `${line}\r\n`;
  }
  return lines;
}

/** The v2 answer's body, `{key_schema_id, value_schema_id, offsets}`, as JSON.stringify writes it. */
export function v2ResponseBody(clusterId: string, result: PublishResult): string {
  const stream = `,"stream":${JSON.stringify(result.stream)},"seq":`;
  const offsets = result.results.map((record) => {
    if (record.kind !== 'published' || record.outcome.status !== 'ACKED') {
      return JSON.stringify(v2Offset(clusterId, result, record));
    }
    const { partition, offset } = record.outcome;
    return `{"partition":${jsonNumber(partition)},"offset":${jsonNumber(Number(offset))}${stream}${jsonNumber(record.seq)}}`;
  });
  return `{"key_schema_id":null,"value_schema_id":null,"offsets":[${offsets.join(',')}]}`;
}

type Published = Extract<RecordResult, { kind: 'published' }>;
type Acked = Extract<RecordOutcome, { status: 'ACKED' }>;

/**
 * Writes an ACKED record's report after `opening` (`{` and any fields before error_code), in
 * `recordReport`'s field order. What every record of the request shares is encoded once.
 */
function ackedReportWriter(clusterId: string, result: PublishResult) {
  const shared = `"error_code":200,"cluster_id":${JSON.stringify(clusterId)},"topic_name":${JSON.stringify(result.topic)},"partition_id":`;
  const stream = `,"stream":${JSON.stringify(result.stream)},"seq":`;
  let timestamp = Number.NaN;
  let timestampJson = '';
  return (opening: string, record: Published, outcome: Acked): string => {
    if (record.timestamp !== timestamp) {
      timestamp = record.timestamp;
      timestampJson = JSON.stringify(restProxyTimestamp(timestamp));
    }
    const { key, value } = record.input;
    return `${opening}${shared}${jsonNumber(outcome.partition)},"offset":${jsonNumber(Number(outcome.offset))},"timestamp":${timestampJson}${key === undefined ? '' : `,"key":${dataJson(key)}`}${value === undefined ? '' : `,"value":${dataJson(value)}`}${stream}${jsonNumber(record.seq)}}`;
  };
}

/** A number as JSON.stringify writes it (null when not finite). */
function jsonNumber(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

/** `{"type":"<type>","size":` of each type: the opening of every key or value without a schema. */
const plainOpenings = new Map<string, string>();

function dataJson(data: RecordData): string {
  const size = data.bytes === null ? -1 : data.bytes.length;
  // Without a schema id a summary is type and size alone, as dataSummary makes it.
  if (data.schemaId === undefined) {
    let opening = plainOpenings.get(data.type);
    if (opening === undefined) {
      opening = `{"type":${JSON.stringify(data.type)},"size":`;
      plainOpenings.set(data.type, opening);
    }
    return `${opening}${size}}`;
  }
  const subject = data.subject === undefined ? '' : `,"subject":${JSON.stringify(data.subject)}`;
  const schemaId =
    data.schemaId === undefined ? '' : `,"schema_id":${JSON.stringify(data.schemaId)}`;
  const version = data.schemaVersion === undefined ? '' : `,"schema_version":${data.schemaVersion}`;
  return `{"type":${JSON.stringify(data.type)}${subject}${schemaId}${version},"size":${size}}`;
}
