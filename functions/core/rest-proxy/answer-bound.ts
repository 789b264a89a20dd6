import { Buffer } from 'node:buffer';
import type { PublishResult, RecordResult } from '../publish/ports.js';
import type { RecordData, RecordInput } from '../publish/record.js';
import { PayloadTooLargeError, TallyError, UnprocessableInputError } from '../shared/errors.js';
import type { RecordOutcome } from '../shared/outcomes.js';
import {
  batchResponseBody,
  produceResponseLines,
  REPORT_MESSAGE_BYTES,
  restProxyTimestamp,
  resultBytesOfString,
  v2ResponseBody,
} from './reports.js';

// The worst case of a publish answer, known before any seq is taken (issue 31): Lambda refuses a
// result over 6,291,556 bytes, and in AWS the caller then gets a 502 after every record was
// sent. Each record's worst report is rendered by the routes' own writers (reports.ts) with the
// widest values it can take — partition, offset and seq at their most digits, the longest
// status, error code and outcome, its message at REPORT_MESSAGE_BYTES — and measured as the
// function's result carries it: the body is a JSON string there, so every `"` of it counts 2
// bytes and each CRLF of the streaming answer 4.

/** Lambda's runtime API: "Exceeded maximum allowed payload size (6291556 bytes)". */
export const LAMBDA_RESPONSE_LIMIT_BYTES = 6_291_556;

/** The publish routes' answers: v3 streaming produce (a line per record), v3 batch, v2. */
export type AnswerRoute = 'stream' | 'batch' | 'v2';

export interface AnswerNames {
  readonly route: AnswerRoute;
  readonly clusterId: string;
  readonly topic: string;
  readonly stream: string;
  /** The batch entries' ids, in order. */
  readonly ids?: readonly string[];
}

const MAX_PARTITION = 2 ** 31 - 1;
/** Kafka's largest offset; reports write it as a JSON number (19 digits). */
const MAX_OFFSET = '9223372036854775807';
const MAX_SEQ = Number.MAX_SAFE_INTEGER;
/** A request's own time with the widest ISO form (…:59.999Z) until the year 9999. */
const WIDEST_NOW = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/** More digits than any error_code a report has (40402, 42206…). */
const WIDEST_ERROR_CODE = 99_999;

/** Every outcome a sent record can end in, with its message empty (counted apart). */
const UNACKED: readonly RecordOutcome[] = [
  { status: 'FAILED', kafkaError: 'MESSAGE_TOO_LARGE', message: '' },
  { status: 'FAILED', kafkaError: 'NOT_LEADER_FOR_PARTITION', message: '' },
  { status: 'NOT_SENT', message: '' },
  { status: 'UNKNOWN', message: '' },
  { status: 'VOID', message: '' },
];

const REJECTED: readonly TallyError[] = [false, true].map((retriable) =>
  Object.assign(new UnprocessableInputError('', { errorCode: WIDEST_ERROR_CODE }), { retriable }),
);

/** Bytes of `text` as the function's result carries it: inside a JSON string. */
const resultBytes = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

/** The route's body for these results. */
function render(names: AnswerNames, results: readonly RecordResult[], ids: readonly string[]) {
  const result: PublishResult = { topic: names.topic, stream: names.stream, results, warnings: [] };
  switch (names.route) {
    case 'stream':
      return produceResponseLines(names.clusterId, result);
    case 'batch':
      return batchResponseBody(names.clusterId, ids, result);
    case 'v2':
      return v2ResponseBody(names.clusterId, result);
  }
}

/**
 * Result bytes of everything but the records: the result's fields (the status and headers a
 * route may answer with) and the body with no record. A batch or v2 body separates its entries
 * with a comma: one more byte is counted with each record.
 */
function envelopeBytes(names: AnswerNames): number {
  const result = {
    statusCode: 599,
    headers: { 'content-type': 'application/json', 'retry-after': '1' },
    body: render(names, [], []),
    isBase64Encoded: false,
  };
  return Buffer.byteLength(JSON.stringify(result));
}

const NO_DATA: RecordInput = {
  partition: undefined,
  key: undefined,
  value: undefined,
  headers: [],
  timestamp: undefined,
};

function published(input: RecordInput, outcome: RecordOutcome): RecordResult {
  return {
    kind: 'published',
    input,
    seq: MAX_SEQ,
    partition: MAX_PARTITION,
    timestamp: WIDEST_NOW,
    outcome,
  };
}

const ACKED: RecordOutcome = { status: 'ACKED', partition: MAX_PARTITION, offset: MAX_OFFSET };

/**
 * The result bytes each record's report can add, from renderings of one record each. A report's
 * parts are written one after another, so what a key's or value's summary adds is measured once
 * per kind of summary (type, subject, schema id and version, digits of its size) and added; the
 * unit test holds the sum against the whole answer rendered.
 */
function recordBounds(names: AnswerNames) {
  const empty = resultBytes(render(names, [], []));
  const bytes = (result: RecordResult) => resultBytes(render(names, [result], [''])) - empty;
  const separator = names.route === 'stream' ? 0 : 1;
  const acked = bytes(published(NO_DATA, ACKED));
  // Not acknowledged, or refused in the publish: no key, value or timestamp, a message instead.
  const unacked =
    Math.max(
      ...UNACKED.map((outcome) => bytes(published(NO_DATA, outcome))),
      ...REJECTED.map((error) => bytes({ kind: 'rejected', error })),
    ) + REPORT_MESSAGE_BYTES;
  const measured = (part: 'key' | 'value', data: RecordData) =>
    bytes(published({ ...NO_DATA, [part]: data }, ACKED)) - acked;
  // A key or value without a schema (nearly every one) adds what its type and the digits of its
  // size add: looked up by type, then by digits, with no text made per record.
  const plain = { key: new Map<string, number[]>(), value: new Map<string, number[]>() };
  const summaries = new Map<string, number>();
  const summary = (part: 'key' | 'value', data: RecordData | undefined) => {
    if (data === undefined) return 0;
    const size = data.bytes === null ? -1 : data.bytes.length;
    if (
      data.schemaId === undefined &&
      data.subject === undefined &&
      data.schemaVersion === undefined
    ) {
      let byDigits = plain[part].get(data.type);
      if (byDigits === undefined) {
        byDigits = [];
        plain[part].set(data.type, byDigits);
      }
      const digits = digitsOf(size);
      let more = byDigits[digits];
      if (more === undefined) {
        more = measured(part, data);
        byDigits[digits] = more;
      }
      return more;
    }
    const kind = `${part} ${data.type} ${data.subject} ${data.schemaId} ${data.schemaVersion} ${digitsOf(size)}`;
    let more = summaries.get(kind);
    if (more === undefined) {
      more = measured(part, data);
      summaries.set(kind, more);
    }
    return more;
  };
  // A timestamp the record gives is written instead of the widest request time (v3 only).
  const widestTime = restProxyTimestamp(WIDEST_NOW).length;
  const timestamp = (ms: number | undefined) =>
    ms === undefined || names.route === 'v2'
      ? 0
      : Math.max(0, restProxyTimestamp(ms).length - widestTime);
  return (record: RecordInput | TallyError, id: string): number => {
    const idBytes = resultBytesOfString(id);
    if (record instanceof TallyError) {
      return bytes({ kind: 'rejected', error: record }) + idBytes + separator;
    }
    const ackedRecord =
      acked +
      summary('key', record.key) +
      summary('value', record.value) +
      timestamp(record.timestamp);
    return Math.max(ackedRecord, unacked) + idBytes + separator;
  };
}

/** Characters of a size as a report writes it (-1 for a null). */
function digitsOf(size: number): number {
  if (size < 0) return String(size).length;
  let digits = 1;
  for (let n = size; n >= 10; n = Math.floor(n / 10)) digits++;
  return digits;
}

export interface AnswerBound {
  /** The most bytes the function's result can take for these records. */
  readonly bytes: number;
  /** How many of the first records fit the limit (all of them when `bytes` fits). */
  readonly fitting: number;
}

/** The worst case of the answer to `records`, before any of them is sent. */
export function answerBound(
  names: AnswerNames,
  records: ReadonlyArray<RecordInput | TallyError>,
  limit = LAMBDA_RESPONSE_LIMIT_BYTES,
): AnswerBound {
  const bound = recordBounds(names);
  const ids = names.ids ?? [];
  let bytes = envelopeBytes(names);
  let fitting = 0;
  for (let i = 0; i < records.length; i++) {
    bytes += bound(records[i] as RecordInput | TallyError, ids[i] ?? '');
    if (bytes <= limit) fitting = i + 1;
  }
  return { bytes, fitting };
}

/**
 * Refuses (413, nothing sent, no seq taken) records whose answer could be over Lambda's
 * response limit, naming the limit and how many of them fit.
 */
export function requireAnswerFits(
  names: AnswerNames,
  records: ReadonlyArray<RecordInput | TallyError>,
): void {
  const { bytes, fitting } = answerBound(names, records);
  if (bytes <= LAMBDA_RESPONSE_LIMIT_BYTES) return;
  const fmt = (n: number) => n.toLocaleString('en-US');
  throw new PayloadTooLargeError(
    `body: the answer to ${fmt(records.length)} records could take ${fmt(bytes)} bytes, over Lambda's response limit of ${fmt(LAMBDA_RESPONSE_LIMIT_BYTES)} bytes; with this topic, stream${names.route === 'batch' ? ' and these ids' : ''} at most ${fmt(fitting)} records fit in one request. Nothing was sent: send them in several smaller requests`,
    { field: 'body' },
  );
}
