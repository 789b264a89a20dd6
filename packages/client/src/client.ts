import {
  type LookedUp,
  lookedUpOf,
  needsRetry,
  outcomeOf,
  type RecordOutcome,
} from './outcomes.js';
import { type Answer, delayMs, type RetryPolicy, verdictOf } from './retry.js';

// A small client for Tally's publish and lookup routes: global fetch, no dependencies. Every
// publish carries an Idempotency-Key (the caller's, else a new UUID), so every retry the rules
// of retry.ts allow is safe: Tally sends again only what is not settled, with the same seqs.

/** A key or value as REST Proxy v3 takes it: `{type, data}`, or by schema. */
export interface RecordData {
  readonly type?: 'BINARY' | 'JSON' | 'STRING' | 'AVRO' | 'PROTOBUF' | 'JSONSCHEMA';
  readonly data: unknown;
  readonly schema_id?: number;
  readonly schema_version?: number;
  readonly subject?: string;
  readonly subject_name_strategy?: 'TOPIC_NAME' | 'RECORD_NAME' | 'TOPIC_RECORD_NAME';
  readonly schema?: string;
}

export interface ProduceRecord {
  readonly key?: RecordData;
  readonly value?: RecordData;
  readonly partition_id?: number;
  /** Header values base64-encoded (null: a Kafka null header). */
  readonly headers?: ReadonlyArray<{ readonly name: string; readonly value: string | null }>;
  readonly timestamp?: string;
}

export interface PublishOptions {
  /** Default: a new UUID per call (kept across that call's retries). */
  readonly idempotencyKey?: string;
  /** Tally-Stream: the stream of sequence numbers (default: the topic's). */
  readonly stream?: string;
  /** Tally-Timeout-Ms: the request's own deadline on Tally's side. */
  readonly timeoutMs?: number;
}

export interface TallyClientOptions {
  /** Tally's API: `https://…execute-api…amazonaws.com`, or `npm start`'s `http://127.0.0.1:<port>`. */
  readonly baseUrl: string;
  /** A bearer token (or a function giving a fresh one for each attempt). */
  readonly token?: string | (() => string | Promise<string>);
  /** Default: the first of GET /v3/clusters. */
  readonly clusterId?: string;
  readonly retry?: RetryPolicy;
  /** Per attempt (default 35 s: above API Gateway's 29 s). */
  readonly attemptTimeoutMs?: number;
  readonly fetch?: typeof fetch;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly newKey?: () => string;
}

export interface PublishResult<R = RecordOutcome> {
  /** The key of the last attempt (a new one after a 422 for voided seqs). */
  readonly idempotencyKey: string;
  readonly attempts: number;
  readonly records: readonly R[];
}

export type LookupResult =
  | { readonly found: true; readonly records: readonly LookedUp[] }
  | { readonly found: false; readonly message: string };

/** A whole request refused, or still failing when the attempts ran out. */
export class TallyRequestError extends Error {
  override readonly name = 'TallyRequestError';
  constructor(
    readonly status: number | undefined,
    readonly body: unknown,
    readonly attempts: number,
    readonly idempotencyKey: string | undefined,
    cause?: unknown,
  ) {
    const b = (body ?? {}) as { message?: unknown };
    super(
      `Tally answered ${status ?? 'nothing'}${typeof b.message === 'string' ? `: ${b.message}` : ''} (after ${attempts} attempt${attempts === 1 ? '' : 's'})`,
      { cause },
    );
  }
  get retriable(): boolean {
    return (this.body as { retriable?: unknown } | null)?.retriable === true;
  }
  get field(): string | undefined {
    const field = (this.body as { field?: unknown } | null)?.field;
    return typeof field === 'string' ? field : undefined;
  }
}

type Parsed<R> = { records: R[] } | undefined;

/** A REST Proxy v3 stream answer: one JSON report per line. */
const reportsOf = (text: string) =>
  text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

export function createTallyClient(options: TallyClientOptions) {
  const base = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms) => new Promise<void>((r) => setTimeout(r, ms)));
  const newKey = options.newKey ?? (() => globalThis.crypto.randomUUID());
  const policy = options.retry ?? {};
  let cluster: Promise<string> | undefined;

  async function call(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: string,
  ) {
    const token = typeof options.token === 'function' ? await options.token() : options.token;
    const response = await doFetch(`${base}${path}`, {
      method,
      headers: { ...headers, ...(token !== undefined && { authorization: `Bearer ${token}` }) },
      ...(body !== undefined && { body }),
      signal: AbortSignal.timeout(options.attemptTimeoutMs ?? 35_000),
    });
    const text = await response.text();
    return { status: response.status, retryAfter: response.headers.get('retry-after'), text };
  }

  /** Sends until an answer is final or the attempts run out (see retry.ts). */
  async function withRetries<R>(
    method: string,
    path: string,
    body: string | undefined,
    headersFor: (key: string | undefined) => Record<string, string>,
    firstKey: string | undefined,
    parse: (status: number, text: string) => Parsed<R>,
    unsettled: (records: readonly R[]) => boolean,
  ): Promise<PublishResult<R>> {
    const max = Math.max(1, policy.maxAttempts ?? 5);
    let key = firstKey;
    for (let attempt = 1; ; attempt++) {
      let answer: Answer | undefined;
      let parsed: Parsed<R>;
      let failure: unknown;
      try {
        const { status, retryAfter, text } = await call(method, path, headersFor(key), body);
        answer = { status, retryAfter, body: safeJson(text) };
        try {
          parsed = parse(status, text);
        } catch (error) {
          // An answer that is not Tally's shape (a proxy's page): final, not a lost connection.
          failure = error;
        }
      } catch (error) {
        failure = error;
      }
      const verdict = verdictOf(answer, parsed !== undefined && unsettled(parsed.records));
      const final = !verdict.retry || attempt >= max;
      if (final) {
        if (parsed !== undefined)
          return { idempotencyKey: key ?? '', attempts: attempt, records: parsed.records };
        throw new TallyRequestError(answer?.status, answer?.body, attempt, key, failure);
      }
      if (verdict.newKey && key !== undefined) key = newKey();
      await sleep(delayMs(policy, attempt, verdict.afterMs));
    }
  }

  function clusterId(): Promise<string> {
    if (options.clusterId !== undefined) return Promise.resolve(options.clusterId);
    cluster ??= withRetries(
      'GET',
      '/v3/clusters',
      undefined,
      () => ({}),
      undefined,
      (status, text) => {
        const id = (safeJson(text) as { data?: Array<{ cluster_id?: unknown }> })?.data?.[0]
          ?.cluster_id;
        return status === 200 && typeof id === 'string' ? { records: [id] } : undefined;
      },
      () => false,
    ).then((r) => r.records[0] as string);
    cluster.catch(() => {
      cluster = undefined;
    });
    return cluster;
  }

  const publishHeaders = (o: PublishOptions) => (key: string | undefined) => ({
    'content-type': 'application/json',
    ...(key !== undefined && { 'idempotency-key': key }),
    ...(o.stream !== undefined && { 'tally-stream': o.stream }),
    ...(o.timeoutMs !== undefined && { 'tally-timeout-ms': String(o.timeoutMs) }),
  });
  const topicPath = async (topic: string) =>
    `/v3/clusters/${encodeURIComponent(await clusterId())}/topics/${encodeURIComponent(topic)}`;

  return {
    clusterId,

    /**
     * POST …/topics/{topic}/records: the records in one streaming body, each record's outcome
     * in order. Throws TallyRequestError when the request as a whole is refused.
     */
    async produce(
      topic: string,
      records: readonly ProduceRecord[],
      o: PublishOptions = {},
    ): Promise<PublishResult> {
      const body = records.map((r) => JSON.stringify(r)).join('\n');
      return withRetries(
        'POST',
        `${await topicPath(topic)}/records`,
        body,
        publishHeaders(o),
        o.idempotencyKey ?? newKey(),
        (status, text) => {
          if (status === 200) return { records: reportsOf(text).map(outcomeOf) };
          // A lone record not written for a reason on Tally's side makes the status; the body
          // is its report.
          const report = safeJson(text) as Record<string, unknown> | undefined;
          return records.length === 1 && typeof report?.outcome === 'string' && 'seq' in report
            ? { records: [outcomeOf(report)] }
            : undefined;
        },
        (list) => list.some(needsRetry),
      );
    },

    /** POST …/records:batch: each entry's outcome by its id, in the request's order. */
    async produceBatch(
      topic: string,
      entries: ReadonlyArray<ProduceRecord & { readonly id: string }>,
      o: PublishOptions = {},
    ): Promise<PublishResult<RecordOutcome & { readonly id: string }>> {
      return withRetries(
        'POST',
        `${await topicPath(topic)}/records:batch`,
        JSON.stringify({ entries }),
        publishHeaders(o),
        o.idempotencyKey ?? newKey(),
        (status, text) => {
          if (status !== 207 && status !== 200) return undefined;
          const answer = safeJson(text) as { successes?: unknown[]; failures?: unknown[] };
          const byId = new Map<string, RecordOutcome>();
          for (const entry of [...(answer?.successes ?? []), ...(answer?.failures ?? [])]) {
            const e = entry as Record<string, unknown>;
            if (typeof e.id === 'string') byId.set(e.id, outcomeOf(e));
          }
          return {
            records: entries.map((e) => ({
              id: e.id,
              ...(byId.get(e.id) ?? {
                outcome: 'UNKNOWN' as const,
                errorCode: 0,
                message: 'not in the answer',
                retriable: true,
                stream: undefined,
                seq: undefined,
                partition: undefined,
              }),
            })),
          };
        },
        (list) => list.some(needsRetry),
      );
    },

    /** GET …/records/lookup: what the ledger knows of a seq, or of a key's records. */
    async lookup(
      query:
        | { readonly stream: string; readonly seq: number }
        | { readonly idempotencyKey: string },
    ): Promise<LookupResult> {
      const search =
        'idempotencyKey' in query
          ? `idempotency_key=${encodeURIComponent(query.idempotencyKey)}`
          : `stream=${encodeURIComponent(query.stream)}&seq=${query.seq}`;
      const path = `/v3/clusters/${encodeURIComponent(await clusterId())}/records/lookup?${search}`;
      const { records } = await withRetries<LookupResult>(
        'GET',
        path,
        undefined,
        () => ({}),
        undefined,
        (status, text) => {
          const body = safeJson(text) as
            | { records?: unknown[]; message?: unknown; field?: unknown }
            | undefined;
          if (status === 200 && Array.isArray(body?.records)) {
            return {
              records: [
                {
                  found: true,
                  records: body.records.map((r) => lookedUpOf(r as Record<string, unknown>)),
                },
              ],
            };
          }
          // Not found naming the seq or the key (an unknown cluster is a refusal: thrown).
          const field = body?.field;
          if (
            status === 404 &&
            typeof body?.message === 'string' &&
            (field === 'seq' || field === 'idempotency_key')
          ) {
            return { records: [{ found: false, message: body.message }] };
          }
          return undefined;
        },
        () => false,
      );
      return records[0] as LookupResult;
    },
  };
}

export type TallyClient = ReturnType<typeof createTallyClient>;

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text === '' ? undefined : text;
  }
}
