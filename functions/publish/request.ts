import type { Context } from 'aws-lambda';
import { charsetDecoder, requireMediaType } from '../core/rest-proxy/content-type.js';
import { parseJsonSequence } from '../core/rest-proxy/json-stream.js';
import { type Caller, requirePublishTo } from '../core/shared/access.js';
import { type HttpEvent, header, pathParameter } from '../platform/http-event.js';
import { checkCluster } from '../publishing/checks.js';
import { publishOptions } from '../publishing/publish.js';
import { type PublishRuntime, publishRuntime } from '../publishing/runtime.js';
import { bodyText } from './body-text.js';

// What every HTTP publish route shares: its options from the headers, the body within its limits,
// the cluster check. The publish itself is ../publishing/publish.ts, which every transport calls.

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
 * The body's JSON values, within both request limits (bytes, then records), read in the charset
 * its Content-Type names (400 for one that is not known).
 */
export function bodyValues(event: HttpEvent, rt: PublishRuntime, charset?: string): unknown[] {
  const text = bodyText(event, rt.config.maxRequestBytes, charsetDecoder(charset));
  return parseJsonSequence(text, rt.config.maxBatchEntries);
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
