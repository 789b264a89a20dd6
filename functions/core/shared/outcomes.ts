// What happened to one record. Every record publish accepts ends in exactly one of these, and
// the ledger keeps it per sequence number (ARCHITECTURE.md, "Record identity").

export type RecordOutcome =
  /** Written: the broker acknowledged it at this offset. */
  | { readonly status: 'ACKED'; readonly partition: number; readonly offset: string }
  /** Refused by the broker: not written. `kafkaError` is Kafka's error name. */
  | { readonly status: 'FAILED'; readonly kafkaError: string; readonly message: string }
  /** Never left the client: not written, safe to retry. */
  | { readonly status: 'NOT_SENT'; readonly message: string }
  /** Sent, no answer in time: may be written. The audit resolves it. */
  | { readonly status: 'UNKNOWN'; readonly message: string }
  /**
   * Allocated, never sent, and never will be: the allocation was applied twice, or the request
   * died before its first ledger write. Only the publisher (for its own seqs, when that write
   * failed) and the audit (for a hole past its horizon) record it; the ledger's conditional
   * writes keep a VOID seq out of the log.
   */
  | { readonly status: 'VOID'; readonly message: string };

export type OutcomeStatus = RecordOutcome['status'];

/** Kafka refusals a resend would repeat, and the HTTP status that says what to change. */
const PERMANENT: Readonly<Record<string, number>> = {
  MESSAGE_TOO_LARGE: 413,
  RECORD_LIST_TOO_LARGE: 413,
  INVALID_TIMESTAMP: 422,
  INVALID_RECORD: 422,
  POLICY_VIOLATION: 422,
  UNSUPPORTED_FOR_MESSAGE_FORMAT: 422,
  TOPIC_AUTHORIZATION_FAILED: 403,
  CLUSTER_AUTHORIZATION_FAILED: 403,
};

/** HTTP status and Confluent-style error_code for an outcome. */
export function outcomeStatusCode(outcome: RecordOutcome): number {
  switch (outcome.status) {
    case 'ACKED':
      return 200;
    case 'FAILED':
      return PERMANENT[outcome.kafkaError] ?? 502;
    case 'NOT_SENT':
    case 'VOID':
      return 503;
    case 'UNKNOWN':
      return 504;
  }
}

/** Whether retrying the same request (same Idempotency-Key) can change the outcome. */
export function isRetriable(outcome: RecordOutcome): boolean {
  if (outcome.status === 'FAILED') return PERMANENT[outcome.kafkaError] === undefined;
  // A VOID seq stays void: only a new request (new seqs) can send its record.
  return outcome.status !== 'ACKED' && outcome.status !== 'VOID';
}

/** Final outcomes are stored as the idempotent response; others let a retry send again. */
export function isSettled(outcome: RecordOutcome): boolean {
  return outcome.status === 'ACKED' || outcome.status === 'FAILED';
}

// Compact form for the ledger: one small tuple per record.
export type EncodedOutcome =
  | readonly ['A', number, string]
  | readonly ['F', string, string]
  | readonly ['N', string]
  | readonly ['U', string]
  | readonly ['V', string];

export function encodeOutcome(outcome: RecordOutcome): EncodedOutcome {
  switch (outcome.status) {
    case 'ACKED':
      return ['A', outcome.partition, outcome.offset];
    case 'FAILED':
      return ['F', outcome.kafkaError, outcome.message];
    case 'NOT_SENT':
      return ['N', outcome.message];
    case 'UNKNOWN':
      return ['U', outcome.message];
    case 'VOID':
      return ['V', outcome.message];
  }
}

export function decodeOutcome(encoded: EncodedOutcome): RecordOutcome {
  switch (encoded[0]) {
    case 'A':
      return { status: 'ACKED', partition: encoded[1], offset: encoded[2] };
    case 'F':
      return { status: 'FAILED', kafkaError: encoded[1], message: encoded[2] };
    case 'N':
      return { status: 'NOT_SENT', message: encoded[1] };
    case 'U':
      return { status: 'UNKNOWN', message: encoded[1] };
    case 'V':
      return { status: 'VOID', message: encoded[1] };
  }
}

/**
 * `JSON.stringify(outcomes.map(encodeOutcome))`, written directly: the ledger stores that text
 * (and existing ledgers hold it), so it must stay exactly that; a unit test holds the two equal
 * on varied outcomes. No tuple per record, and a run of one message (a block's UNKNOWNs, a
 * failed partition's records) is escaped once.
 */
export function outcomesJson(outcomes: readonly RecordOutcome[]): string {
  let json = '';
  let lastText: string | undefined;
  let lastJson = '';
  const text = (value: string): string => {
    if (value !== lastText) {
      lastText = value;
      lastJson = jsonString(value);
    }
    return lastJson;
  };
  for (let i = 0; i < outcomes.length; i++) {
    const outcome = outcomes[i] as RecordOutcome;
    let entry: string;
    switch (outcome.status) {
      case 'ACKED':
        entry = `["A",${jsonNumber(outcome.partition)},${jsonString(outcome.offset)}]`;
        break;
      case 'FAILED':
        entry = `["F",${jsonString(outcome.kafkaError)},${text(outcome.message)}]`;
        break;
      case 'NOT_SENT':
        entry = `["N",${text(outcome.message)}]`;
        break;
      case 'UNKNOWN':
        entry = `["U",${text(outcome.message)}]`;
        break;
      case 'VOID':
        entry = `["V",${text(outcome.message)}]`;
        break;
    }
    json = i === 0 ? entry : `${json},${entry}`;
  }
  return `[${json}]`;
}

/** A number as JSON.stringify writes it (null when not finite; -0 as 0, as String does). */
function jsonNumber(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

/** JSON.stringify(text), without its escaping for text that needs none (printable ASCII). */
function jsonString(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(text);
  }
  return `"${text}"`;
}
