import type { Context } from 'aws-lambda';
import { checkTopic, fingerprint } from '../core/publish/plan.js';
import type { PublishRequest, PublishResult } from '../core/publish/ports.js';
import { isSettledResult } from '../core/publish/publisher.js';
import { type AnswerNames, requireAnswerFits } from '../core/rest-proxy/answer-bound.js';
import { encodeSchemaParts, type ParsedRecord } from '../core/rest-proxy/schema-input.js';
import { Deadline } from '../core/shared/deadline.js';
import { InvalidInputError, OverloadedError, TallyError } from '../core/shared/errors.js';
import { log, withCorrelation } from '../platform/log.js';
import { checkIdempotencyKey, checkStream } from './checks.js';
import { publishRequestMetrics } from './metrics.js';
import type { PublishRuntime } from './runtime.js';
import type { SchemaCodecs } from './schema-encoder.js';

// The publish use case every transport calls: the HTTP routes (functions/publish), the
// publish-and-verify workflow's task (functions/workflows/publish-record.ts) and the canary. Each
// gives its options and parsed records and shapes the result into its own answer.

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
    /** Tally-Transactional as given (undefined: the topic's setting decides). */
    readonly transactional?: boolean | undefined;
  },
  context: Context | undefined,
  rt: PublishRuntime,
  names: {
    readonly stream: string;
    readonly idempotencyKey: string;
    readonly timeoutMs: string;
    readonly transactional?: string;
  },
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
  const transactional = transactionalMode(topic, given.transactional, rt, names.transactional);
  const now = Date.now();
  const deadline = Deadline.compute({
    now,
    gatewayTimeoutMs: rt.config.gatewayTimeoutMs,
    lambdaRemainingMs: context?.getRemainingTimeInMillis?.(),
    marginMs: rt.config.deadlineMarginMs,
    clientTimeoutMs,
  });
  return { topic, stream, idempotencyKey, deadline, now, transactional };
}

/**
 * Whether a request goes in one Kafka transaction: the header when given, else the topic's
 * setting (TALLY_TRANSACTIONAL_TOPICS). Turning it off on a transactional topic is refused, so an
 * operator's choice is never bypassed silently; turning it on needs the id pool.
 */
function transactionalMode(
  topic: string,
  given: boolean | undefined,
  rt: PublishRuntime,
  name = 'Tally-Transactional',
): boolean {
  const configured = rt.config.transactionalTopics.includes(topic);
  if (given === false && configured) {
    throw new InvalidInputError(
      `${name}: false is refused for topic ${topic}: TALLY_TRANSACTIONAL_TOPICS names it, so every request to it is sent in a transaction`,
      { field: name },
    );
  }
  const transactional = given ?? configured;
  if (transactional && rt.transactions === undefined) {
    throw new InvalidInputError(
      `${name}: true, but transactional publish is not configured here (TALLY_TXN_IDS_TABLE is not set)`,
      { field: name },
    );
  }
  return transactional;
}

let inFlight = 0;

/**
 * Publishes under the container's concurrency limit (429 instead of queueing); with an
 * Idempotency-Key, a settled answer is stored in the key's item and replayed to every retry.
 */
export async function publish<T>(
  rt: PublishRuntime,
  parsed: Omit<PublishRequest, 'records'> & {
    readonly records: ReadonlyArray<ParsedRecord | TallyError>;
  },
  /**
   * The transport's answer from the result: what the caller gets, and what an Idempotency-Key
   * stores and replays to every retry (so a keyed transport's answer must stay readable as
   * stored).
   */
  shape: (result: PublishResult) => T,
  extras: {
    /** The schema codecs' import, from a route that parsed keys and values with schemas. */
    readonly codecs?: SchemaCodecs;
    /**
     * An HTTP route's answer: refused with 413 before any seq is taken when its worst case could
     * be over Lambda's response limit (core/rest-proxy/answer-bound.ts).
     */
    readonly answer?: Omit<AnswerNames, 'topic' | 'stream'>;
  } = {},
): Promise<T> {
  const { codecs, answer: answerNames } = extras;
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
    // Subjects and schema ids are known now (a report echoes them); no seq is taken yet.
    if (answerNames !== undefined) {
      requireAnswerFits(
        { ...answerNames, topic: request.topic, stream: request.stream },
        request.records,
      );
    }
    // Hashed once, here: the key's item compares it.
    const keyed =
      request.idempotencyKey === undefined
        ? request
        : { ...request, fingerprint: fingerprint(request) };
    const started = performance.now();
    const { answer, warnings } = await rt.publisher.publishAnswered(keyed, (result) => {
      publishRequestMetrics(result, performance.now() - started);
      return { answer: shape(result), settled: isSettledResult(result) };
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
