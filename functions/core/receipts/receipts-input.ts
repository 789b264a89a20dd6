import { InvalidInputError, PayloadTooLargeError } from '../shared/errors.js';
import { isPlainObject, rejectUnknownFields } from '../shared/input-checks.js';
import type { ReceiptBatch, SeqRun } from './msk-receipts.js';

// POST /v3/clusters/{cluster_id}/receipts, for consumers outside Lambda:
// `{group, stream, seqs: [[from, to], ...]}`, or for a consumer that keeps no sequence numbers,
// counts per time bucket (Chaperone-style): `{group, topic, buckets: [{start, end, count}]}`.

const NAME = /^[A-Za-z0-9._:-]{1,249}$/;
export const MAX_RUNS = 10_000;

export interface BucketCount {
  readonly start: string;
  readonly end: string;
  readonly count: number;
}

export type ReceiptsInput =
  | { readonly kind: 'seqs'; readonly batch: ReceiptBatch }
  | {
      readonly kind: 'buckets';
      readonly group: string;
      readonly topic: string;
      readonly buckets: readonly BucketCount[];
    };

function invalid(field: string, message: string): never {
  throw new InvalidInputError(`${field}: ${message}`, { field });
}

function name(value: unknown, field: string): string {
  if (typeof value !== 'string' || !NAME.test(value))
    invalid(field, '1-249 of A-Z a-z 0-9 . _ : -');
  return value;
}

function seqRuns(value: unknown): SeqRun[] {
  if (!Array.isArray(value) || value.length === 0)
    invalid('seqs', 'must be a non-empty list of [from, to]');
  if (value.length > MAX_RUNS) {
    throw new PayloadTooLargeError(`seqs: ${value.length} runs; at most ${MAX_RUNS} per request`, {
      field: 'seqs',
    });
  }
  return value.map((run: unknown, i): SeqRun => {
    const [from, to] = Array.isArray(run) && run.length === 2 ? run : [undefined, undefined];
    if (
      !Number.isSafeInteger(from) ||
      !Number.isSafeInteger(to) ||
      (from as number) < 1 ||
      (to as number) < (from as number)
    ) {
      invalid(`seqs[${i}]`, 'must be [from, to] with integers 1 ≤ from ≤ to');
    }
    return [from as number, to as number];
  });
}

function isoTime(value: unknown, field: string): string {
  if (
    typeof value !== 'string' ||
    Number.isNaN(Date.parse(value)) ||
    !/T.*(Z|[+-]\d\d:?\d\d)$/.test(value)
  ) {
    invalid(field, 'must be an ISO-8601 date-time with a zone');
  }
  return new Date(value).toISOString();
}

export function parseReceipts(body: unknown): ReceiptsInput {
  if (!isPlainObject(body)) invalid('body', 'must be an object');
  if ('buckets' in body) {
    rejectUnknownFields(body, new Set(['group', 'topic', 'buckets']), '');
    const group = name(body.group, 'group');
    const topic = name(body.topic, 'topic');
    if (!Array.isArray(body.buckets) || body.buckets.length === 0)
      invalid('buckets', 'must be a non-empty list');
    const buckets = body.buckets.map((bucket: unknown, i) => {
      const at = `buckets[${i}]`;
      if (!isPlainObject(bucket)) invalid(at, 'must be {start, end, count}');
      rejectUnknownFields(bucket, new Set(['start', 'end', 'count']), `${at}.`);
      const start = isoTime(bucket.start, `${at}.start`);
      const end = isoTime(bucket.end, `${at}.end`);
      if (end <= start) invalid(`${at}.end`, 'must be after start');
      if (!Number.isSafeInteger(bucket.count) || (bucket.count as number) < 0) {
        invalid(`${at}.count`, 'must be a non-negative integer');
      }
      return { start, end, count: bucket.count as number };
    });
    return { kind: 'buckets', group, topic, buckets };
  }
  rejectUnknownFields(body, new Set(['group', 'stream', 'seqs']), '');
  const group = name(body.group, 'group');
  const stream = name(body.stream, 'stream');
  const seqs = seqRuns(body.seqs);
  const count = seqs.reduce((sum, [from, to]) => sum + to - from + 1, 0);
  return { kind: 'seqs', batch: { group, stream, topic: undefined, seqs, offsets: [], count } };
}
