import { describe, expect, it } from 'vitest';
import { httpEvent } from '../../helpers/http-event.js';
import { createExchangeChecker } from '../../helpers/openapi-validate.js';

// The integration tests' check (test/helpers/openapi-hook.ts) finds each way an exchange can
// depart from the document: it is not a check that cannot fail.

const checker = createExchangeChecker();
const PRODUCE = 'POST /v3/clusters/{cluster_id}/topics/{topic_name}/records';
const RECEIPTS = 'POST /v3/clusters/{cluster_id}/receipts';
const produceEvent = (body: string) =>
  httpEvent({ pathParameters: { cluster_id: 'c1', topic_name: 'orders' }, body });
const acked = {
  error_code: 200,
  cluster_id: 'c1',
  topic_name: 'orders',
  partition_id: 0,
  offset: 4,
  timestamp: '2026-11-30T10:00:00.000Z',
  value: { type: 'STRING', size: 1 },
  stream: 'orders',
  seq: 5,
};
const jsonAnswer = (statusCode: number, body: string) => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body,
});
const record = JSON.stringify({ value: { type: 'STRING', data: 'x' } });

describe('checking an exchange against the OpenAPI document', () => {
  it('accepts a streaming produce answered line by line, and refuses a bad line', () => {
    const lines = `${JSON.stringify(acked)}\r\n${JSON.stringify({ ...acked, seq: 6 })}\r\n`;
    const ok = checker.check(produceEvent(`${record}${record}`), jsonAnswer(200, lines), [PRODUCE]);
    expect(ok).toEqual({ routeKey: PRODUCE, problems: [] });
    const { seq: _, ...noSeq } = acked;
    const bad = `${JSON.stringify(acked)}\r\n${JSON.stringify(noSeq)}\r\n`;
    const found = checker.check(produceEvent(record), jsonAnswer(200, bad), [PRODUCE]);
    expect(found.problems.join()).toMatch(/line 2 .*seq/);
  });

  it('refuses a status, a content type or an error body the document does not list', () => {
    const event = produceEvent(record);
    expect(checker.check(event, jsonAnswer(418, '{}'), [PRODUCE]).problems.join()).toMatch(
      /status 418 is not one the document lists/,
    );
    const text = { statusCode: 200, headers: { 'content-type': 'text/plain' }, body: 'x' };
    expect(checker.check(event, text, [PRODUCE]).problems.join()).toMatch(
      /content-type text\/plain/,
    );
    const error = JSON.stringify({ error_code: 404, message: 'cluster_id: …', retriable: 'no' });
    expect(checker.check(event, jsonAnswer(404, error), [PRODUCE]).problems).not.toEqual([]);
  });

  it("refuses a header the answer's status does not declare, or a declared one with a bad value", () => {
    const event = produceEvent(record);
    const error = '{"error_code":503,"message":"DynamoDB did not answer","retriable":true}';
    const busy = (headers: Record<string, string>) => ({
      statusCode: 503,
      headers: { 'content-type': 'application/json', ...headers },
      body: error,
    });
    expect(checker.check(event, busy({ 'retry-after': '1' }), [PRODUCE]).problems).toEqual([]);
    expect(
      checker.check(event, busy({ 'retry-after': 'soon' }), [PRODUCE]).problems.join(),
    ).toMatch(/header Retry-After must match pattern/);
    const withdrawn = { ...busy({ 'retry-after': '1' }), statusCode: 400 };
    expect(checker.check(event, withdrawn, [PRODUCE]).problems.join()).toMatch(
      /header retry-after is not declared for status 400/,
    );
  });

  it("refuses nested parts of an answer that depart from the code's shapes", () => {
    const AUDIT = 'GET /v3/clusters/{cluster_id}/audits/{audit_id}';
    const event = httpEvent({ pathParameters: { cluster_id: 'c1', audit_id: 'a1' } });
    const bucket = {
      start: '2026-11-30T10:00:00.000Z',
      produced: 3,
      inLog: 2,
      notInLedger: 0,
      duplicatesInLog: 0,
      lost: 1,
      unknownAbsent: 0,
      processed: { billing: 2 },
      pending: {},
      redelivered: {},
    };
    const report = (lost: object, row: object = bucket) => ({
      auditId: 'a1',
      topic: 'orders',
      at: '2026-11-30T10:05:00.000Z',
      complete: true,
      scanned: 2,
      scannedTotal: 2,
      untracked: 0,
      unread: 0,
      checkpoint: [{ partition: 0, next: 2 }],
      streams: [
        {
          stream: 'orders',
          produced: 3,
          inLog: 2,
          processed: { billing: 2 },
          producerDuplicates: [],
          consumerDuplicates: [],
          lost: [lost],
          pending: [],
          unknownLanded: [],
          unknownAbsent: [],
          buckets: [row],
        },
      ],
      topicBuckets: [],
      settled: { landed: 0, notWritten: 0 },
    });
    const lost = { from: 3, to: 3, acked: { partition: 0, offset: 2 } };
    const answer = (body: object) => jsonAnswer(200, JSON.stringify(body));
    expect(checker.check(event, answer(report(lost)), [AUDIT]).problems).toEqual([]);
    const withSession = { ...lost, acked: { ...lost.acked, session: 's1' } };
    expect(checker.check(event, answer(report(withSession)), [AUDIT]).problems.join()).toMatch(
      /acked.*unevaluated/,
    );
    const { notInLedger: _, ...partialRow } = bucket;
    expect(checker.check(event, answer(report(lost, partialRow)), [AUDIT]).problems.join()).toMatch(
      /buckets\/0 must have required property 'notInLedger'/,
    );
  });

  it('checks the request only when it was accepted: a 2xx to an invalid request is a departure', () => {
    const answer = jsonAnswer(202, '{"accepted":"seqs","group":"g","stream":"s","records":1}');
    const invalid = httpEvent({
      pathParameters: { cluster_id: 'c1' },
      body: JSON.stringify({ group: 'g', stream: 's', seqs: [[1, 1]], extra: true }),
    });
    expect(checker.check(invalid, answer, [RECEIPTS]).problems.join()).toMatch(/unevaluated/);
    const refused = jsonAnswer(
      400,
      '{"error_code":400,"message":"extra: unknown field","retriable":false,"field":"extra"}',
    );
    expect(checker.check(invalid, refused, [RECEIPTS]).problems).toEqual([]);
  });

  it('finds the route from rawPath or the path parameters when the routeKey is a placeholder', () => {
    const burrow = [
      'GET /v3/kafka',
      'GET /v3/kafka/{cluster}/consumer/{group}/lag',
      'GET /burrow/admin',
    ];
    const event = { ...httpEvent(), rawPath: '/v3/kafka/local/consumer/g1/lag/' };
    expect(checker.routeOf(event, burrow)).toMatchObject({ routeKey: burrow[1] });
    const approvals = [
      'GET /v3/clusters/{cluster_id}/approvals',
      'POST /v3/clusters/{cluster_id}/approvals/{token}',
    ];
    const decide = httpEvent({ pathParameters: { cluster_id: 'c', token: 'a'.repeat(20) } });
    expect(checker.routeOf(decide, approvals)).toMatchObject({ routeKey: approvals[1] });
    expect(checker.routeOf(httpEvent(), burrow)).toMatch(/cannot tell which/);
  });
});

describe('records publish refused one by one', () => {
  it('are left out of the request check; an accepted bad record is still a departure', () => {
    const rejected = {
      error_code: 400,
      message: 'value.type: …',
      outcome: 'REJECTED',
      retriable: false,
    };
    const bad = JSON.stringify({ value: { type: 'TEXT', data: 'x' } });
    const lines = `${JSON.stringify(acked)}\r\n${JSON.stringify(rejected)}\r\n`;
    const refused = checker.check(produceEvent(`${record}${bad}`), jsonAnswer(200, lines), [
      PRODUCE,
    ]);
    expect(refused.problems).toEqual([]);
    const both = `${JSON.stringify(acked)}\r\n${JSON.stringify({ ...acked, seq: 6 })}\r\n`;
    const accepted = checker.check(produceEvent(`${record}${bad}`), jsonAnswer(200, both), [
      PRODUCE,
    ]);
    expect(accepted.problems.join()).toMatch(/request body\[1\]\/value\/type/);
  });
});
