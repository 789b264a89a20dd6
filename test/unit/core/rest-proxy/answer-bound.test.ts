import { describe, expect, it } from 'vitest';
import type { PublishResult, RecordResult } from '../../../../functions/core/publish/ports.js';
import type { RecordData, RecordInput } from '../../../../functions/core/publish/record.js';
import {
  type AnswerNames,
  type AnswerRoute,
  answerBound,
  LAMBDA_RESPONSE_LIMIT_BYTES,
  requireAnswerFits,
} from '../../../../functions/core/rest-proxy/answer-bound.js';
import {
  batchResponseBody,
  produceResponseLines,
  REPORT_MESSAGE_BYTES,
  reportMessage,
  resultBytesOfString,
  v2ResponseBody,
} from '../../../../functions/core/rest-proxy/reports.js';
import {
  InvalidInputError,
  PayloadTooLargeError,
  type TallyError,
} from '../../../../functions/core/shared/errors.js';
import type { RecordOutcome } from '../../../../functions/core/shared/outcomes.js';
import { lambdaResultBytes } from '../../../../infra/local/gateway-limits.js';

// The bound must never be below the truth: each case renders the real answer (the routes'
// writers) for the outcomes a request can end in and measures it as the local gateway front
// measures a Lambda result, at the longest names Tally allows.

const ROUTES: readonly AnswerRoute[] = ['stream', 'batch', 'v2'];
const LONGEST = {
  clusterId: 'MkU3OEVBNTcwNTJENDM2Qk',
  topic: 't'.repeat(249),
  stream: 's'.repeat(249),
};
const id = (i: number) => `${'i'.repeat(74)}${String(i).padStart(6, '0')}`;
const names = (route: AnswerRoute, count: number, base = LONGEST): AnswerNames => ({
  route,
  ...base,
  ...(route === 'batch' && { ids: Array.from({ length: count }, (_, i) => id(i)) }),
});

const data = (bytes: number | null, schema?: Partial<RecordData>): RecordData => ({
  type: 'STRING',
  bytes: bytes === null ? null : Buffer.alloc(bytes, 'x'),
  ...schema,
});
const record = (over: Partial<RecordInput> = {}): RecordInput => ({
  partition: undefined,
  key: undefined,
  value: data(1),
  headers: [],
  timestamp: undefined,
  ...over,
});

/** Records of every kind a report tells apart: keys, schemas and subjects, nulls, timestamps. */
const variety: ReadonlyArray<RecordInput | TallyError> = [
  record(),
  record({ key: data(12), value: data(123_456) }),
  record({
    key: data(3, { type: 'AVRO', schemaId: 2_147_483_647, subject: `${'é'.repeat(200)}"-key` }),
    value: data(1_000_000, {
      type: 'PROTOBUF',
      schemaId: 123,
      subject: 'q'.repeat(255),
      schemaVersion: 99_999,
    }),
  }),
  record({ value: data(null) }),
  record({ value: undefined }),
  // Extended years are the widest timestamps a v3 record can give (-000001-…).
  record({ timestamp: Date.UTC(-1, 0, 1, 0, 0, 0, 1) }),
  new InvalidInputError(`entries[7].value.${'"\u0001'.repeat(500)}: unknown field`),
];

/** A long message of the characters that take most bytes in a result. */
const NASTY = `${'\u0001"\\\ud800é'.repeat(400)} tail`;
const outcomes: Record<string, (i: number) => RecordOutcome> = {
  acked: (i) => ({
    status: 'ACKED',
    partition: 2_147_483_647,
    offset: `${9_223_372_036_854_775_807n - BigInt(i)}`,
  }),
  failed: () => ({ status: 'FAILED', kafkaError: 'MESSAGE_TOO_LARGE', message: NASTY }),
  notSent: () => ({ status: 'NOT_SENT', message: NASTY }),
  unknown: () => ({ status: 'UNKNOWN', message: NASTY }),
  void: () => ({ status: 'VOID', message: NASTY }),
};

function results(
  records: ReadonlyArray<RecordInput | TallyError>,
  outcome: (i: number) => RecordOutcome,
): RecordResult[] {
  return records.map(
    (input, i): RecordResult =>
      'headers' in input
        ? {
            kind: 'published',
            input,
            seq: Number.MAX_SAFE_INTEGER - i,
            partition: 2_147_483_647,
            timestamp: input.timestamp ?? Date.UTC(2026, 11, 2, 5, 0, 0, 123),
            outcome: outcome(i),
          }
        : { kind: 'rejected', error: input },
  );
}

/** The function's result bytes for this answer, as the local gateway front measures them. */
function trueBytes(n: AnswerNames, answered: RecordResult[], status: number): number {
  const result: PublishResult = {
    topic: n.topic,
    stream: n.stream,
    results: answered,
    warnings: [],
  };
  const body =
    n.route === 'stream'
      ? produceResponseLines(n.clusterId, result)
      : n.route === 'batch'
        ? batchResponseBody(n.clusterId, n.ids ?? [], result)
        : v2ResponseBody(n.clusterId, result);
  return lambdaResultBytes({
    status,
    headers: { 'content-type': 'application/json', 'retry-after': '1' },
    body: Buffer.from(body),
  });
}

describe('the worst case of a publish answer', () => {
  const SHORT = { clusterId: LONGEST.clusterId, topic: 'o', stream: 'o' };
  const cases = ROUTES.flatMap((route) => [
    { route, which: 'the longest', base: LONGEST },
    { route, which: 'one-character', base: SHORT },
  ]);
  it.each(cases)(
    'is never below the real $route answer at $which names, whatever each record ends in',
    ({ route, base }) => {
      const records = Array.from(
        { length: 50 },
        (_, i) => variety[i % variety.length] as RecordInput,
      );
      const n = names(route, records.length, base);
      const bound = answerBound(n, records).bytes;
      const worlds = Object.entries(outcomes).map(([world, outcome]) => {
        const bytes = trueBytes(n, results(records, outcome), 207);
        expect(bytes, world).toBeLessThanOrEqual(bound);
        return bytes;
      });
      // Every record alternating between outcomes, too.
      const keys = Object.values(outcomes);
      const mixed = trueBytes(
        n,
        results(records, (i) => (keys[i % keys.length] as (i: number) => RecordOutcome)(i)),
        503,
      );
      expect(mixed).toBeLessThanOrEqual(bound);
      // The worst world: each record in the outcome whose report is its largest.
      const single = (i: number, outcome: (i: number) => RecordOutcome) =>
        trueBytes(
          { ...n, ids: n.ids?.slice(i, i + 1) ?? [] },
          results(records.slice(i, i + 1), outcome),
          207,
        );
      const worst = records.map((_, i) => {
        const sizes = keys.map((outcome) => single(i, outcome));
        return keys[sizes.indexOf(Math.max(...sizes))] as (i: number) => RecordOutcome;
      });
      const worstBytes = trueBytes(
        n,
        results(records, (i) => (worst[i] as (i: number) => RecordOutcome)(i)),
        503,
      );
      expect(worstBytes).toBeLessThanOrEqual(bound);
      expect(worstBytes).toBeGreaterThanOrEqual(Math.max(...worlds));
      // A bound, not a guess far above: within 2% of the worst world rendered.
      expect(bound).toBeLessThan(worstBytes * 1.02);
    },
  );

  it.each(ROUTES)(
    'refuses 10,000 records at the longest names on %s with 413 naming the limit and the largest count that fits',
    (route) => {
      const records = Array.from({ length: 10_000 }, () => record());
      const n = names(route, records.length);
      const { bytes, fitting } = answerBound(n, records);
      expect(bytes).toBeGreaterThan(LAMBDA_RESPONSE_LIMIT_BYTES);
      // The count named is the largest that fits: one more does not.
      expect(answerBound(n, records.slice(0, fitting)).bytes).toBeLessThanOrEqual(
        LAMBDA_RESPONSE_LIMIT_BYTES,
      );
      expect(answerBound(n, records.slice(0, fitting + 1)).bytes).toBeGreaterThan(
        LAMBDA_RESPONSE_LIMIT_BYTES,
      );
      // And its real answer, every record acknowledged at the widest digits, fits.
      const acked = trueBytes(
        n,
        results(records.slice(0, fitting), outcomes.acked as (i: number) => RecordOutcome),
        200,
      );
      expect(acked).toBeLessThanOrEqual(LAMBDA_RESPONSE_LIMIT_BYTES);
      expect(fitting).toBeGreaterThan(7_000);
      let refusal: unknown;
      try {
        requireAnswerFits(n, records);
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toBeInstanceOf(PayloadTooLargeError);
      const { message, status, field } = refusal as PayloadTooLargeError;
      expect({ status, field }).toEqual({ status: 413, field: 'body' });
      expect(message).toContain("Lambda's response limit of 6,291,556 bytes");
      expect(message).toContain(`at most ${fitting.toLocaleString('en-US')} records fit`);
      expect(message).toContain('Nothing was sent');
    },
  );

  it.each(ROUTES)(
    'counts the subjects and schema ids a report echoes: 10,000 schema records on %s',
    (route) => {
      // Issue 31: with subjects echoed per record, 10,000 records answered 14-15 MB.
      const schema = (part: string) =>
        data(40, {
          type: 'AVRO',
          schemaId: 100_001,
          schemaVersion: 12,
          subject: `${'o'.repeat(240)}-${part}`,
        });
      const records = Array.from({ length: 10_000 }, () =>
        record({ key: schema('key'), value: schema('value') }),
      );
      const n = names(route, records.length);
      const { bytes, fitting } = answerBound(n, records);
      expect(bytes).toBeGreaterThan(LAMBDA_RESPONSE_LIMIT_BYTES);
      const acked = (count: number) =>
        trueBytes(
          n,
          results(records.slice(0, count), outcomes.acked as (i: number) => RecordOutcome),
          200,
        );
      expect(acked(fitting)).toBeLessThanOrEqual(LAMBDA_RESPONSE_LIMIT_BYTES);
      // v2 answers carry no key or value summaries: its count stays high.
      if (route === 'v2') expect(fitting).toBeGreaterThan(7_000);
      else {
        expect(bytes).toBeGreaterThan(2 * LAMBDA_RESPONSE_LIMIT_BYTES);
        expect(fitting).toBeLessThan(5_000);
        // Close to the truth: 3% more records than named would be over the limit, acked.
        expect(acked(Math.ceil(fitting * 1.03))).toBeGreaterThan(LAMBDA_RESPONSE_LIMIT_BYTES);
      }
    },
  );

  it.each(ROUTES)('lets 10,000 small records with short names through on %s', (route) => {
    const records = Array.from({ length: 10_000 }, () => record());
    const short = names(route, records.length, { ...LONGEST, topic: 'orders', stream: 'orders' });
    const n = { ...short, ...(short.ids && { ids: short.ids.map((_, i) => `e-${i}`) }) };
    const { bytes, fitting } = answerBound(n, records);
    expect(bytes).toBeLessThanOrEqual(LAMBDA_RESPONSE_LIMIT_BYTES);
    expect(fitting).toBe(10_000);
    expect(() => requireAnswerFits(n, records)).not.toThrow();
  });
});

describe('a report message', () => {
  it('is cut to REPORT_MESSAGE_BYTES of the result, at a character, with an ellipsis', () => {
    const cut = reportMessage(NASTY);
    expect(resultBytesOfString(cut)).toBeLessThanOrEqual(REPORT_MESSAGE_BYTES);
    expect(resultBytesOfString(cut)).toBeGreaterThan(REPORT_MESSAGE_BYTES - 8);
    expect(cut.endsWith('…')).toBe(true);
    expect(NASTY.startsWith(cut.slice(0, -1))).toBe(true);
    const short = 'KafkaJSNumberOfRetriesExceeded: no answer from the leader of partition 3';
    expect(reportMessage(short)).toBe(short);
  });
});
