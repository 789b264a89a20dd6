// What Tally answers about each record (docs/api.md, "Record identity and outcomes"), as typed
// values: a report line of the v3 produce stream, an entry of a batch's 207, a lookup's record.

/** Sent and acknowledged by every in-sync replica: its place in the log. */
export interface Acked {
  readonly outcome: 'ACKED';
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: string | undefined;
  readonly stream: string;
  readonly seq: number;
}

/** Given a seq, and not (or maybe not) written. */
export interface NotAcked {
  /**
   * FAILED: the broker refused it, not written. NOT_SENT: never left Tally, not written.
   * UNKNOWN: sent, no answer in time — may be written; the audit settles it.
   */
  readonly outcome: 'FAILED' | 'NOT_SENT' | 'UNKNOWN';
  readonly errorCode: number;
  readonly message: string;
  readonly retriable: boolean;
  readonly stream: string | undefined;
  readonly seq: number | undefined;
  readonly partition: number | undefined;
}

/** Refused before a seq was given (a bad field, a schema the registry refuses): nothing sent. */
export interface Rejected {
  readonly outcome: 'REJECTED';
  readonly errorCode: number;
  readonly message: string;
  readonly retriable: boolean;
}

export type RecordOutcome = Acked | NotAcked | Rejected;

type Json = Readonly<Record<string, unknown>>;

const num = (value: unknown) => (typeof value === 'number' ? value : undefined);
const str = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** One report object of Tally's (or REST Proxy's) answer as an outcome. */
export function outcomeOf(report: Json): RecordOutcome {
  const errorCode = num(report.error_code) ?? 0;
  if (errorCode === 200) {
    return {
      outcome: 'ACKED',
      topic: str(report.topic_name) ?? '',
      partition: num(report.partition_id) ?? -1,
      offset: num(report.offset) ?? -1,
      timestamp: str(report.timestamp),
      stream: str(report.stream) ?? '',
      seq: num(report.seq) ?? 0,
    };
  }
  const message = str(report.message) ?? '';
  const retriable = report.retriable === true;
  const outcome = str(report.outcome);
  if (outcome === 'FAILED' || outcome === 'NOT_SENT' || outcome === 'UNKNOWN') {
    return {
      outcome,
      errorCode,
      message,
      retriable,
      stream: str(report.stream),
      seq: num(report.seq),
      partition: num(report.partition_id),
    };
  }
  return { outcome: 'REJECTED', errorCode, message, retriable };
}

/** Sent, or maybe sent, with no final answer: the same Idempotency-Key sends it again. */
export const needsRetry = (o: RecordOutcome): boolean =>
  o.outcome === 'NOT_SENT' || o.outcome === 'UNKNOWN';

/** What the ledger knows of one seq (GET …/records/lookup). */
export interface LookedUp {
  readonly stream: string;
  readonly seq: number;
  readonly topic: string;
  readonly outcome: 'ACKED' | 'FAILED' | 'NOT_SENT' | 'UNKNOWN' | 'VOID';
  readonly partition?: number;
  readonly offset?: number;
  readonly message?: string;
  readonly session: string;
  readonly idempotencyKey?: string;
}

export function lookedUpOf(record: Json): LookedUp {
  const partition = num(record.partition_id);
  const offset = num(record.offset);
  const message = str(record.message);
  const key = str(record.idempotency_key);
  return {
    stream: str(record.stream) ?? '',
    seq: num(record.seq) ?? 0,
    topic: str(record.topic_name) ?? '',
    outcome: (str(record.outcome) ?? 'UNKNOWN') as LookedUp['outcome'],
    ...(partition !== undefined && { partition }),
    ...(offset !== undefined && { offset }),
    ...(message !== undefined && { message }),
    session: str(record.session) ?? '',
    ...(key !== undefined && { idempotencyKey: key }),
  };
}
