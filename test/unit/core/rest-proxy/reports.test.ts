import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import type { PublishResult, RecordResult } from '../../../../functions/core/publish/ports.js';
import type { RecordInput } from '../../../../functions/core/publish/record.js';
import {
  batchResponseBody,
  errorReport,
  httpStatusOf,
  produceResponseLines,
  REPORT_MESSAGE_BYTES,
  recordReport,
  restProxyTimestamp,
  resultBytesOfString,
  v2Offset,
  v2ResponseBody,
} from '../../../../functions/core/rest-proxy/reports.js';
import { InvalidInputError, NotFoundError } from '../../../../functions/core/shared/errors.js';
import type { RecordOutcome } from '../../../../functions/core/shared/outcomes.js';

const CLUSTER = 'lkc-123';
const TIMESTAMP = Date.UTC(2026, 10, 29, 16, 0, 0, 250);

const input: RecordInput = {
  partition: undefined,
  key: { type: 'STRING', bytes: Buffer.from('key') },
  value: { type: 'JSON', bytes: Buffer.from('"bar"') },
  headers: [],
  timestamp: undefined,
};

function published(outcome: RecordOutcome, record: RecordInput = input): RecordResult {
  return { kind: 'published', input: record, seq: 17, partition: 2, timestamp: TIMESTAMP, outcome };
}

function resultOf(...results: RecordResult[]): PublishResult {
  return { topic: 'orders', stream: 'orders-stream', results, warnings: [] };
}

describe('recordReport', () => {
  it('describes an ACKED record like REST Proxy, plus stream and seq', () => {
    const record = published({ status: 'ACKED', partition: 2, offset: '12345' });
    expect(recordReport(CLUSTER, resultOf(record), record)).toEqual({
      error_code: 200,
      cluster_id: 'lkc-123',
      topic_name: 'orders',
      partition_id: 2,
      offset: 12345,
      timestamp: '2026-11-29T16:00:00.250Z',
      key: { type: 'STRING', size: 3 },
      value: { type: 'JSON', size: 5 },
      stream: 'orders-stream',
      seq: 17,
    });
  });

  it('takes partition_id from the outcome and reports offset as a number', () => {
    const record = published({ status: 'ACKED', partition: 5, offset: '0' });
    const report = recordReport(CLUSTER, resultOf(record), record);
    expect(report.partition_id).toBe(5);
    expect(report.offset).toBe(0);
    expect(typeof report.offset).toBe('number');
  });

  it('reports size -1 for a null and leaves out an absent key or value', () => {
    const nullValue: RecordInput = {
      ...input,
      key: undefined,
      value: { type: 'BINARY', bytes: null },
    };
    const record = published({ status: 'ACKED', partition: 0, offset: '1' }, nullValue);
    const report = recordReport(CLUSTER, resultOf(record), record);
    expect(report.value).toEqual({ type: 'BINARY', size: -1 });
    expect('key' in report).toBe(false);
  });

  it.each([
    [{ status: 'FAILED', kafkaError: 'MESSAGE_TOO_LARGE', message: 'm' }, 413, false],
    [{ status: 'FAILED', kafkaError: 'RECORD_LIST_TOO_LARGE', message: 'm' }, 413, false],
    [{ status: 'FAILED', kafkaError: 'NOT_LEADER_OR_FOLLOWER', message: 'm' }, 502, true],
    [{ status: 'NOT_SENT', message: 'm' }, 503, true],
    [{ status: 'UNKNOWN', message: 'm' }, 504, true],
  ] as ReadonlyArray<readonly [RecordOutcome, number, boolean]>)(
    'reports %o with error_code %i',
    (outcome, errorCode, retriable) => {
      const record = published(outcome);
      expect(recordReport(CLUSTER, resultOf(record), record)).toEqual({
        error_code: errorCode,
        message: 'm',
        outcome: outcome.status,
        retriable,
        stream: 'orders-stream',
        seq: 17,
        partition_id: 2,
      });
    },
  );

  it('reports a rejected record with the error code of its error', () => {
    const error = new NotFoundError('partition_id: partition 9 does not exist', {
      errorCode: 40402,
    });
    const record: RecordResult = { kind: 'rejected', error };
    expect(recordReport(CLUSTER, resultOf(record), record)).toEqual({
      error_code: 40402,
      message: 'partition_id: partition 9 does not exist',
      outcome: 'REJECTED',
      retriable: false,
    });
    const invalid: RecordResult = {
      kind: 'rejected',
      error: new InvalidInputError('value.data: is required', { field: 'value.data' }),
    };
    const report = recordReport(CLUSTER, resultOf(invalid), invalid);
    expect(report.error_code).toBe(400);
    expect(report.outcome).toBe('REJECTED');
    expect(report).toEqual(errorReport((invalid as { error: InvalidInputError }).error));
  });
});

describe('batchResponseBody', () => {
  /** The answer as the batch handler built it before: objects, then JSON.stringify. */
  function throughObjects(clusterId: string, ids: readonly string[], result: PublishResult) {
    const successes: object[] = [];
    const failures: object[] = [];
    result.results.forEach((record, i) => {
      const { error_code, ...report } = recordReport(clusterId, result, record);
      if (error_code === 200) successes.push({ id: ids[i], error_code, ...report });
      else failures.push({ id: ids[i], error_code, ...report });
    });
    return JSON.stringify({ successes, failures });
  }

  const data = (type: 'BINARY' | 'JSON' | 'STRING', bytes: string | null) => ({
    type,
    bytes: bytes === null ? null : Buffer.from(bytes),
  });
  const outcomes: RecordOutcome[] = [
    { status: 'ACKED', partition: 0, offset: '0' },
    { status: 'ACKED', partition: 11, offset: '9007199254740993' },
    { status: 'ACKED', partition: 2, offset: '123456789' },
    { status: 'UNKNOWN', message: 'no "answer"\n' },
    { status: 'FAILED', kafkaError: 'MESSAGE_TOO_LARGE', message: 'too large' },
    { status: 'NOT_SENT', message: 'not sent' },
  ];
  const inputs: RecordInput[] = [
    input,
    { ...input, key: undefined },
    { ...input, key: undefined, value: undefined },
    { ...input, key: data('BINARY', null), value: data('STRING', 'é ✓') },
    { ...input, value: data('JSON', null) },
    // Schema-serialized: REST Proxy's type, subject, schema_id, schema_version; or the id alone.
    {
      ...input,
      key: { type: 'AVRO', bytes: Buffer.from([0, 0, 0, 0, 3]), schemaId: 3 },
      value: {
        type: 'PROTOBUF',
        bytes: Buffer.from([0, 0, 0, 0, 4, 8]),
        schemaId: 4,
        subject: 'orders-"value"\u2028',
        schemaVersion: 2,
      },
    },
    // A version without an id (Tally's encoders make none): type and size, as the objects say.
    { ...input, value: { type: 'JSON', bytes: Buffer.from('{}'), schemaVersion: 7 } },
  ];

  it("reports a schema record's subject, id and version in REST Proxy's order", () => {
    const record = published({ status: 'ACKED', partition: 0, offset: '1' }, inputs[5]);
    const report = recordReport(CLUSTER, resultOf(record), record);
    expect(report.key).toEqual({ type: 'AVRO', schema_id: 3, size: 5 });
    expect(Object.entries(report.value as object)).toEqual([
      ['type', 'PROTOBUF'],
      ['subject', 'orders-"value"\u2028'],
      ['schema_id', 4],
      ['schema_version', 2],
      ['size', 6],
    ]);
  });

  it('writes exactly the text the report objects made, for every kind of entry', () => {
    const results: RecordResult[] = [];
    for (const [i, outcome] of outcomes.entries()) {
      for (const [j, record] of inputs.entries()) {
        results.push({
          kind: 'published',
          input: record,
          seq: 1 + results.length,
          partition: i,
          // Several timestamps, repeated (the writer remembers the last one's text).
          timestamp: TIMESTAMP + (j % 2) * 1_000_003 + (i === 2 ? 7 : 0),
          outcome,
        });
      }
      results.push({ kind: 'rejected', error: new InvalidInputError(`value: bad ${i}`) });
    }
    // Plain ids (what batch-input allows) and ids the writer must escape, written alike.
    const ids = results.map((_, i) => (i % 3 === 0 ? `q"\\\u0001é~ ${i}` : `e-${i}_X`));
    for (const [clusterId, topic, stream] of [
      [CLUSTER, 'orders', 'orders-stream'],
      ['a"b\\c', 'tópic.\u2028', 'stream:\t"x"'],
    ] as const) {
      const result = { topic, stream, results, warnings: [] };
      const body = batchResponseBody(clusterId, ids, result);
      expect(body).toBe(throughObjects(clusterId, ids, result));
      expect(JSON.parse(body).successes).toHaveLength(3 * inputs.length);
    }
  });

  it('writes the streaming and v2 answers exactly as their objects were written', () => {
    const results = outcomes.flatMap((outcome, i) =>
      inputs.map(
        (record, j): RecordResult => ({
          kind: 'published',
          input: record,
          seq: 100 + i * 10 + j,
          partition: i,
          timestamp: TIMESTAMP + j,
          outcome,
        }),
      ),
    );
    results.push({ kind: 'rejected', error: new NotFoundError('gone', { errorCode: 40402 }) });
    const result = { topic: 'tópic', stream: 's"1', results, warnings: [] };
    expect(produceResponseLines(CLUSTER, result)).toBe(
      results.map((r) => `${JSON.stringify(recordReport(CLUSTER, result, r))}\r\n`).join(''),
    );
    expect(v2ResponseBody(CLUSTER, result)).toBe(
      JSON.stringify({
        key_schema_id: null,
        value_schema_id: null,
        offsets: results.map((r) => v2Offset(CLUSTER, result, r)),
      }),
    );
  });

  it('writes empty lists as [] and an entry without an id without one', () => {
    const none = resultOf();
    expect(batchResponseBody(CLUSTER, [], none)).toBe('{"successes":[],"failures":[]}');
    const record = published({ status: 'ACKED', partition: 1, offset: '5' });
    expect(batchResponseBody(CLUSTER, [], resultOf(record))).toBe(
      throughObjects(CLUSTER, [], resultOf(record)),
    );
  });
});

describe('restProxyTimestamp', () => {
  // REST Proxy writes ProduceResponse.timestamp, a java.time.Instant, with Jackson's
  // ISO_INSTANT: no fraction when it is zero, else milliseconds (kafka-rest
  // entities/v3/ProduceResponse.java).
  it('leaves out a fraction of zero, as REST Proxy does', () => {
    expect(restProxyTimestamp(1000)).toBe('1970-01-01T00:00:01Z');
    expect(restProxyTimestamp(Date.UTC(2026, 10, 29, 10))).toBe('2026-11-29T10:00:00Z');
  });

  it('writes milliseconds when there are some', () => {
    expect(restProxyTimestamp(1250)).toBe('1970-01-01T00:00:01.250Z');
    expect(restProxyTimestamp(1001)).toBe('1970-01-01T00:00:01.001Z');
  });

  it('is what a whole-second ACKED report carries, written directly or not', () => {
    const acked: RecordOutcome = { status: 'ACKED', partition: 0, offset: '1' };
    const record: RecordResult = {
      kind: 'published',
      input,
      seq: 1,
      partition: 0,
      timestamp: 5000,
      outcome: acked,
    };
    expect(recordReport(CLUSTER, resultOf(record), record).timestamp).toBe('1970-01-01T00:00:05Z');
    expect(produceResponseLines(CLUSTER, resultOf(record))).toContain(
      '"timestamp":"1970-01-01T00:00:05Z"',
    );
  });
});

describe('httpStatusOf', () => {
  it('keeps three-digit codes and shortens five-digit ones', () => {
    expect(httpStatusOf(200)).toBe(200);
    expect(httpStatusOf(400)).toBe(400);
    expect(httpStatusOf(504)).toBe(504);
    expect(httpStatusOf(40403)).toBe(404);
    expect(httpStatusOf(40402)).toBe(404);
    expect(httpStatusOf(42201)).toBe(422);
  });
});

describe('v2Offset', () => {
  it('gives partition and offset for an ACKED record', () => {
    const record = published({ status: 'ACKED', partition: 3, offset: '99' });
    expect(v2Offset(CLUSTER, resultOf(record), record)).toEqual({
      partition: 3,
      offset: 99,
      stream: 'orders-stream',
      seq: 17,
    });
  });

  it('gives null partition and offset, error_code and error for an unsent record', () => {
    const record = published({ status: 'UNKNOWN', message: 'no answer' });
    const offset = v2Offset(CLUSTER, resultOf(record), record);
    expect(offset).toMatchObject({
      partition: null,
      offset: null,
      error_code: 504,
      error: 'no answer',
      outcome: 'UNKNOWN',
      retriable: true,
      stream: 'orders-stream',
      seq: 17,
    });
    expect('message' in offset).toBe(false);
  });

  it('gives error_code and error for a rejected record', () => {
    const record: RecordResult = {
      kind: 'rejected',
      error: new NotFoundError('no such partition', { errorCode: 40402 }),
    };
    expect(v2Offset(CLUSTER, resultOf(record), record)).toEqual({
      partition: null,
      offset: null,
      error_code: 40402,
      error: 'no such partition',
      outcome: 'REJECTED',
      retriable: false,
    });
  });
});

describe('a report message', () => {
  it('is cut to REPORT_MESSAGE_BYTES in an outcome and in a refusal, whole in the ledger', () => {
    const long = `an earlier attempt may have written it (${'"x'.repeat(1000)})`;
    const record = published({ status: 'UNKNOWN', message: long });
    const report = recordReport(CLUSTER, resultOf(record), record);
    expect(resultBytesOfString(report.message as string)).toBeLessThanOrEqual(REPORT_MESSAGE_BYTES);
    expect(report.message).toMatch(/^an earlier attempt may have written it \("x.*…$/);
    const refused = errorReport(
      new InvalidInputError(`entries[0].${'f'.repeat(5000)}: unknown field`),
    );
    expect(resultBytesOfString(refused.message as string)).toBeLessThanOrEqual(
      REPORT_MESSAGE_BYTES,
    );
    // The outcome itself (what the ledger and the lookup route keep) is untouched.
    expect(
      record.kind === 'published' && record.outcome.status === 'UNKNOWN' && record.outcome.message,
    ).toBe(long);
  });
});

describe('resultBytesOfString', () => {
  it('is the bytes the text takes as a JSON string inside a JSON string, plain or not', () => {
    const texts = [
      '',
      'e-1_X',
      'a b~!',
      'q"x',
      'back\\slash',
      '\u0001',
      '\u007f',
      'é',
      '✓\u2028',
      '\ud800',
    ];
    for (const text of texts) {
      expect(resultBytesOfString(text), text).toBe(
        Buffer.byteLength(JSON.stringify(JSON.stringify(text))) - 6,
      );
    }
  });
});
