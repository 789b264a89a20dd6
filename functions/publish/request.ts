import type { Context } from 'aws-lambda';
import { charsetDecoder, requireMediaType } from '../core/rest-proxy/content-type.js';
import { parseJsonSequence } from '../core/rest-proxy/json-stream.js';
import { type Caller, requirePublishTo } from '../core/shared/access.js';
import { InvalidInputError } from '../core/shared/errors.js';
import {
  decodePathParameter,
  type HttpBody,
  type HttpEvent,
  header,
} from '../platform/http-event.js';
import { checkCluster } from '../publishing/checks.js';
import { publishOptions } from '../publishing/publish.js';
import { type PublishRuntime, publishRuntime } from '../publishing/runtime.js';
import { bodyText } from './body-text.js';

// What every HTTP publish route shares: its options from the headers, the body within its limits,
// the cluster check. The publish itself is ../publishing/publish.ts, which every transport calls.

/**
 * Everything a publish route reads of its HTTP event, read once here; each field is checked
 * where it is used, in the order the route answers its problems (415 first).
 */
interface PublishEvent {
  readonly contentType: string | undefined;
  /** The path's `cluster_id` and `topic_name` as given, still percent-encoded. */
  readonly clusterId: string | undefined;
  readonly topic: string | undefined;
  readonly stream: string | undefined;
  readonly idempotencyKey: string | undefined;
  readonly timeoutMs: string | undefined;
  readonly transactional: string | undefined;
  readonly body: HttpBody;
}

export function readPublishEvent(event: HttpEvent): PublishEvent {
  return {
    contentType: header(event, 'content-type'),
    clusterId: event.pathParameters?.cluster_id,
    topic: event.pathParameters?.topic_name,
    stream: header(event, 'tally-stream'),
    idempotencyKey: header(event, 'idempotency-key'),
    timeoutMs: header(event, 'tally-timeout-ms'),
    transactional: header(event, 'tally-transactional'),
    body: {
      isBase64Encoded: event.isBase64Encoded,
      ...(event.body !== undefined && { body: event.body }),
    },
  };
}

export function requestOptions(
  read: PublishEvent,
  context: Context | undefined,
  rt: PublishRuntime,
  caller: Caller,
) {
  const topic = decodePathParameter('topic_name', read.topic);
  const options = publishOptions(
    {
      topic,
      stream: read.stream,
      idempotencyKey: read.idempotencyKey,
      timeoutMs: read.timeoutMs === undefined ? undefined : Number(read.timeoutMs),
      transactional: transactionalHeader(read.transactional),
    },
    context,
    rt,
    {
      stream: 'Tally-Stream',
      idempotencyKey: 'Idempotency-Key',
      timeoutMs: 'Tally-Timeout-Ms',
      transactional: 'Tally-Transactional',
    },
  );
  // The API's own allow-list was checked with the topic's name; now the caller's.
  requirePublishTo(caller, topic);
  return options;
}

/** `Tally-Transactional: true|false` (any case); absent: the topic's setting decides. */
function transactionalHeader(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  const text = value.trim().toLowerCase();
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new InvalidInputError('Tally-Transactional: true or false', {
    field: 'Tally-Transactional',
  });
}

/**
 * The body's JSON values, within both request limits (bytes, then records), read in the charset
 * its Content-Type names (400 for one that is not known).
 */
export function bodyValues(read: PublishEvent, rt: PublishRuntime, charset?: string): unknown[] {
  return bodyParts(read, rt, charset).values();
}

/** The body's text (within the byte limit), and its JSON values when a route asks for them. */
function bodyParts(read: PublishEvent, rt: PublishRuntime, charset?: string) {
  const text = bodyText(read.body, rt.config.maxRequestBytes, charsetDecoder(charset));
  return { text, values: () => parseJsonSequence(text, rt.config.maxBatchEntries) };
}

/**
 * The start every v3 produce route shares: runtime, cluster, topic, headers, the body's text and
 * its JSON values (`values()`: parsed when the route asks).
 */
export async function beginV3Produce(
  event: HttpEvent,
  context: Context | undefined,
  caller: Caller,
) {
  const read = readPublishEvent(event);
  // REST Proxy's v3 produce routes consume application/json only: 415 before anything else.
  const { charset } = requireMediaType(read.contentType, ['application/json']);
  charsetDecoder(charset);
  const rt = await publishRuntime();
  const clusterId = decodePathParameter('cluster_id', read.clusterId);
  const options = requestOptions(read, context, rt, caller);
  await checkCluster(rt, clusterId, options.deadline);
  return { rt, clusterId, options, ...bodyParts(read, rt, charset) };
}
