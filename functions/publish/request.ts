import type { Context } from 'aws-lambda';
import { checkTopic, fingerprint } from '../core/publish/plan.js';
import type { PublishRequest, PublishResult } from '../core/publish/ports.js';
import { isSettledResult } from '../core/publish/publisher.js';
import { charsetDecoder, requireMediaType } from '../core/rest-proxy/content-type.js';
import { parseJsonSequence } from '../core/rest-proxy/json-stream.js';
import type { ParsedRecord } from '../core/rest-proxy/schema-input.js';
import { encodeSchemaParts } from '../core/rest-proxy/schema-input.js';
import { type Caller, requirePublishTo } from '../core/shared/access.js';
import { Deadline } from '../core/shared/deadline.js';
import { InvalidInputError, OverloadedError, TallyError } from '../core/shared/errors.js';
import {
  type HttpEvent,
  type HttpResponse,
  header,
  pathParameter,
} from '../platform/http-event.js';
import { log, withCorrelation } from '../platform/log.js';
import { bodyText } from './body-text.js';
import { checkCluster, checkIdempotencyKey, checkStream } from './checks.js';
import { publishRequestMetrics } from './metrics.js';
import { type PublishRuntime, publishRuntime } from './runtime.js';
import type { SchemaCodecs } from './schema-encoder.js';

// What every publish route shares: headers, body limits, cluster check, and the guarded run.

export function requestOptions(
  event: HttpEvent,
  context: Context | undefined,
  rt: PublishRuntime,
  topic: string,
  caller: Caller,
) {
  const timeout = header(event, 'tally-timeout-ms');
  const options = publishOptions(
    {
      topic,
      stream: header(event, 'tally-stream'),
      idempotencyKey: header(event, 'idempotency-key'),
      timeoutMs: timeout === undefined ? undefined : Number(timeout),
    },
    context,
    rt,
    { stream: 'Tally-Stream', idempotencyKey: 'Idempotency-Key', timeoutMs: 'Tally-Timeout-Ms' },
  );
  // The API's own allow-list was checked with the topic's name; now the caller's.
  requirePublishTo(caller, topic);
  return options;
}

/**
 * Options of one publish, however they came (HTTP headers, a workflow task's fields): checked,
 * with the deadline. `names` says what to call each field in errors.
 */
export function publishOptions(
  given: {
    readonly topic: string;
    readonly stream: string | undefined;
    readonly idempotencyKey: string | undefined;
    readonly timeoutMs: number | undefined;
  },
  context: Context | undefined,
  rt: PublishRuntime,
  names: { readonly stream: string; readonly idempotencyKey: string; readonly timeoutMs: string },
) {
  const { topic, idempotencyKey, timeoutMs: clientTimeoutMs } = given;
  // The topic is judged first: an illegal name must be named as such, never as a bad stream.
  checkTopic(topic, rt.allowTopic);
  const stream = checkStream(given.stream ?? topic, names.stream);
  if (idempotencyKey !== undefined) checkIdempotencyKey(idempotencyKey, names.idempotencyKey);
  withCorrelation({ stream, idempotencyKey });
  if (
    clientTimeoutMs !== undefined &&
    !(Number.isSafeInteger(clientTimeoutMs) && clientTimeoutMs > 0)
  ) {
    throw new InvalidInputError(`${names.timeoutMs}: a positive integer (milliseconds)`, {
      field: names.timeoutMs,
    });
  }
  const now = Date.now();
  const deadline = Deadline.compute({
    now,
    gatewayTimeoutMs: rt.config.gatewayTimeoutMs,
    lambdaRemainingMs: context?.getRemainingTimeInMillis?.(),
    marginMs: rt.config.deadlineMarginMs,
    clientTimeoutMs,
  });
  return { topic, stream, idempotencyKey, deadline, now };
}

/**
 * The body's JSON values, within both request limits (bytes, then records), read in the charset
 * its Content-Type names (400 for one that is not known).
 */
export function bodyValues(event: HttpEvent, rt: PublishRuntime, charset?: string): unknown[] {
  const text = bodyText(event, rt.config.maxRequestBytes, charsetDecoder(charset));
  return parseJsonSequence(text, rt.config.maxBatchEntries);
}

let inFlight = 0;

/**
 * Publishes under the container's concurrency limit (429 instead of queueing); with an
 * Idempotency-Key, a settled answer is stored in the key's item and replayed to every retry.
 */
export async function runPublish(
  rt: PublishRuntime,
  parsed: Omit<PublishRequest, 'records'> & {
    readonly records: ReadonlyArray<ParsedRecord | TallyError>;
  },
  // Kept for the callers: the request's deadline already holds the Lambda's remaining time.
  _context: Context | undefined,
  respond: (result: PublishResult) => HttpResponse,
  /** The schema codecs' import, from a route that parsed keys and values with schemas. */
  codecs?: SchemaCodecs,
): Promise<HttpResponse> {
  if (inFlight >= rt.config.maxConcurrentRequests) {
    throw new OverloadedError(
      `this instance is handling ${inFlight} requests; nothing was sent, retry shortly`,
      {
        retryAfterSeconds: 1,
      },
    );
  }
  inFlight++;
  try {
    const request = { ...parsed, records: await encodeRecords(rt, parsed, codecs) };
    // Hashed once, here: the key's item compares it.
    const keyed =
      request.idempotencyKey === undefined
        ? request
        : { ...request, fingerprint: fingerprint(request) };
    const started = performance.now();
    const { answer, warnings } = await rt.publisher.publishAnswered(keyed, (result) => {
      publishRequestMetrics(result, performance.now() - started);
      return { answer: respond(result), settled: isSettledResult(result) };
    });
    for (const warning of warnings) log('warn', warning, { stream: request.stream });
    return answer;
  } finally {
    inFlight--;
  }
}

/**
 * The records with every key and value that has a schema serialized, before any seq is
 * allocated: a record its schema refuses, or whose registry did not answer, is its own error
 * entry and nothing of it is sent. With an Idempotency-Key a registry that did not answer fails
 * the whole request instead (503, nothing sent): the key's seqs are bound to the records it
 * accepted, so a retry must find the same ones.
 */
async function encodeRecords(
  rt: PublishRuntime,
  request: {
    readonly topic: string;
    readonly idempotencyKey: string | undefined;
    readonly records: ReadonlyArray<ParsedRecord | TallyError>;
  },
  codecs: SchemaCodecs | undefined,
) {
  const { schemaEncoder } = rt;
  // Only a route that passes the codecs parsed with schemas: no other has a pending part.
  if (schemaEncoder === undefined || codecs === undefined) {
    return request.records as PublishRequest['records'];
  }
  const records = await encodeSchemaParts(request.records, request.topic, () =>
    schemaEncoder(codecs),
  );
  if (request.idempotencyKey !== undefined) {
    const retriable = records.find((r) => r instanceof TallyError && r.retriable);
    if (retriable) throw retriable;
  }
  return records;
}

/** The start every v3 produce route shares: runtime, cluster, topic, headers, JSON values. */
export async function beginV3Produce(
  event: HttpEvent,
  context: Context | undefined,
  caller: Caller,
) {
  // REST Proxy's v3 produce routes consume application/json only: 415 before anything else.
  const { charset } = requireMediaType(header(event, 'content-type'), ['application/json']);
  charsetDecoder(charset);
  const rt = await publishRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  const options = requestOptions(event, context, rt, pathParameter(event, 'topic_name'), caller);
  await checkCluster(rt, clusterId, options.deadline);
  return { rt, clusterId, options, values: bodyValues(event, rt, charset) };
}
