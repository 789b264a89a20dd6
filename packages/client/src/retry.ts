// The retry rules of docs/api.md, in one place: which answer is sent again, with which
// Idempotency-Key, after how long.
//
// - 503 and 504, a record NOT_SENT or UNKNOWN, and no answer at all (the connection failed):
//   the same body again with the same key, so Tally sends only what is not settled, with the
//   same seqs (a copy in the log is recognisable as the same record).
// - 429 (nothing was sent): again after its Retry-After, same key.
// - 409 for a key whose first request is still in flight (retriable, with Retry-After): the
//   same key after the wait, which replays the first request's answer once it is complete.
// - 422 naming Idempotency-Key whose seqs the audit voided: a new key (the old one can never
//   send). Every other 4xx is final: the same request would be refused again.

export type Verdict =
  | { readonly retry: false }
  | { readonly retry: true; readonly newKey: boolean; readonly afterMs: number | undefined };

export interface Answer {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly body: unknown;
}

/** Retry-After in ms: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const isVoided = (body: unknown) => {
  const b = body as { field?: unknown; message?: unknown } | null;
  return (
    typeof b === 'object' &&
    b !== null &&
    b.field === 'Idempotency-Key' &&
    typeof b.message === 'string' &&
    b.message.includes('voided')
  );
};

/** The 409 of a key whose first request still holds it: Tally marks it retriable. */
const isKeyInFlight = (body: unknown) => {
  const b = body as { field?: unknown; retriable?: unknown } | null;
  return (
    typeof b === 'object' && b !== null && b.field === 'Idempotency-Key' && b.retriable === true
  );
};

/** What to do with a whole-request answer (a failed connection is `undefined`). */
export function verdictOf(answer: Answer | undefined, unsettled: boolean): Verdict {
  if (answer === undefined) return { retry: true, newKey: false, afterMs: undefined };
  const afterMs = retryAfterMs(answer.retryAfter);
  const { status } = answer;
  if (status === 429 || status === 503 || status === 504)
    return { retry: true, newKey: false, afterMs };
  if (status === 409 && isKeyInFlight(answer.body)) return { retry: true, newKey: false, afterMs };
  if (status === 422 && isVoided(answer.body)) return { retry: true, newKey: true, afterMs: 0 };
  if (status >= 200 && status < 300 && unsettled) return { retry: true, newKey: false, afterMs };
  return { retry: false };
}

export interface RetryPolicy {
  /** Attempts in all, the first included (default 5). */
  readonly maxAttempts?: number;
  /** First backoff without a Retry-After (default 200 ms), doubled each time. */
  readonly baseDelayMs?: number;
  /** Longest wait between attempts, Retry-After included (default 10 s). */
  readonly maxDelayMs?: number;
}

/** The wait before attempt `attempt + 1` (attempt counts from 1): Retry-After, else backoff. */
export function delayMs(policy: RetryPolicy, attempt: number, afterMs: number | undefined): number {
  const max = policy.maxDelayMs ?? 10_000;
  if (afterMs !== undefined) return Math.min(afterMs, max);
  const base = (policy.baseDelayMs ?? 200) * 2 ** (attempt - 1);
  // Full jitter: many callers refused together do not come back together.
  return Math.min(max, Math.round(base / 2 + (Math.random() * base) / 2));
}
