import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkRecord,
  fingerprint,
  SESSION_ID_MAX_BYTES,
  type StampSource,
  stamp,
} from '../../../../functions/core/publish/plan.js';
import type { PublishRequest } from '../../../../functions/core/publish/ports.js';
import { NULL_HEADER_VALUE, type RecordInput } from '../../../../functions/core/publish/record.js';
import { singleRecordBatchBytes } from '../../../../functions/core/publish/record-size.js';
import {
  InvalidInputError,
  PayloadTooLargeError,
} from '../../../../functions/core/shared/errors.js';
import { PROPERTY_SEED } from '../../../helpers/property-seed.js';

// Stamping builds a request's repeated header values once and sizes records without stamping
// them: what goes on the wire, and the 413 threshold, must stay what they were.

const bytes = fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b));
const data = fc.option(
  fc.record({
    type: fc.constantFrom('BINARY' as const, 'STRING' as const, 'JSON' as const),
    bytes: fc.option(bytes, { nil: null }),
  }),
  { nil: undefined },
);
const arbitraryRecord: fc.Arbitrary<RecordInput> = fc.record({
  partition: fc.constant(undefined),
  key: data,
  value: data,
  headers: fc.array(
    fc.record({
      // Repeated names too (several values of one header), and names that are not ASCII.
      name: fc.oneof(
        fc.constantFrom('a', 'trace', 'constructor', '__proto__', 'toString'),
        fc.string({ minLength: 1, maxLength: 12 }),
      ),
      value: bytes,
    }),
    { maxLength: 70 },
  ),
  timestamp: fc.constant(undefined),
});
const arbitrarySource: fc.Arbitrary<StampSource> = fc.record({
  stream: fc.string({ minLength: 1, maxLength: 249 }),
  idempotencyKey: fc.option(fc.string({ minLength: 1, maxLength: 255 }), { nil: undefined }),
});

/**
 * The stamped headers made by hand, every value from its text: the record's headers in order of
 * their first value (several values as a list), then Tally's.
 */
function stampedAsBefore(
  record: RecordInput,
  request: StampSource,
  seq: number,
): Record<string, Buffer | Buffer[]> {
  const values = new Map<string, Buffer[]>();
  for (const { name, value } of record.headers)
    values.set(name, [...(values.get(name) ?? []), value]);
  return Object.fromEntries([
    ...[...values].map(([name, list]) => [name, list.length === 1 ? list[0] : list]),
    ['tally.stream', Buffer.from(request.stream)],
    ['tally.seq', Buffer.from(String(seq))],
    ...(request.idempotencyKey === undefined
      ? []
      : [['tally.idempotency-key', Buffer.from(request.idempotencyKey)]]),
  ]);
}

describe('stamp', () => {
  it('writes the same header names, order and bytes as before', () => {
    fc.assert(
      fc.property(
        arbitraryRecord,
        arbitrarySource,
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        (record, request, seq) => {
          const headers = stamp(record, request, seq);
          const before = stampedAsBefore(record, request, seq);
          expect(Object.keys(headers)).toEqual(Object.keys(before));
          expect(headers).toEqual(before);
        },
      ),
      { seed: PROPERTY_SEED },
    );
  });

  it("shares one Buffer of the stream and of the key among a request's records", () => {
    const record: RecordInput = {
      partition: undefined,
      key: undefined,
      value: undefined,
      headers: [],
      timestamp: undefined,
    };
    const request = { stream: 'orders', idempotencyKey: 'key-1' };
    const first = stamp(record, request, 1);
    const second = stamp(record, request, 2);
    expect(second['tally.stream']).toBe(first['tally.stream']);
    expect(second['tally.idempotency-key']).toBe(first['tally.idempotency-key']);
    expect(second['tally.seq']).not.toBe(first['tally.seq']);
    expect(String(second['tally.seq'])).toBe('2');
  });
});

describe('stamp: header names that are names of Object.prototype', () => {
  it('keeps headers named constructor and __proto__ as the client sent them', () => {
    const [one, two, three] = ['1', '2', '3'].map((text) => Buffer.from(text));
    const record: RecordInput = {
      partition: undefined,
      key: undefined,
      value: undefined,
      headers: [
        { name: 'constructor', value: one as Buffer },
        { name: '__proto__', value: two as Buffer },
        { name: '__proto__', value: three as Buffer },
      ],
      timestamp: undefined,
    };
    const headers = stamp(record, { stream: 's', idempotencyKey: undefined }, 1);
    expect(Object.keys(headers)).toEqual(['constructor', '__proto__', 'tally.stream', 'tally.seq']);
    expect(headers.constructor).toBe(one);
    expect(Object.getOwnPropertyDescriptor(headers, '__proto__')?.value).toEqual([two, three]);
    expect(Object.getPrototypeOf(headers)).toBe(Object.prototype);
  });
});

describe('checkRecord', () => {
  it('refuses a record exactly when, stamped at its widest, it is over max.message.bytes', () => {
    fc.assert(
      fc.property(arbitraryRecord, arbitrarySource, (record, request) => {
        const widest = singleRecordBatchBytes({
          key: record.key?.bytes ?? null,
          value: record.value?.bytes ?? null,
          headers: {
            ...stampedAsBefore(record, request, Number.MAX_SAFE_INTEGER),
            'tally.session': Buffer.alloc(SESSION_ID_MAX_BYTES),
          },
        });
        const topic = (maxMessageBytes: number) => ({ partitions: 3, maxMessageBytes });
        expect(checkRecord(record, topic(widest), 0, request)).toBe(record);
        const refused = checkRecord(record, topic(widest - 1), 0, request);
        expect(refused).toBeInstanceOf(PayloadTooLargeError);
        expect((refused as PayloadTooLargeError).message).toContain(`${widest} bytes`);
      }),
      { seed: PROPERTY_SEED },
    );
  });
});

describe('fingerprint', () => {
  /** The fingerprint as it was first written (stored in keys' items): one JSON.stringify a record. */
  function fingerprintAsBefore(request: PublishRequest): string {
    const hash = createHash('sha256').update(JSON.stringify([request.topic, request.stream]));
    for (const record of request.records) {
      if (!('headers' in record)) continue;
      hash.update(
        JSON.stringify([
          record.partition ?? null,
          record.key?.type ?? null,
          record.key?.bytes?.toString('base64') ?? null,
          record.value?.type ?? null,
          record.value?.bytes?.toString('base64') ?? null,
          record.headers.map((h) => [
            h.name,
            h.value === NULL_HEADER_VALUE ? null : h.value.toString('base64'),
          ]),
          record.timestamp ?? null,
        ]),
      );
    }
    return hash.digest('base64url');
  }
  const placed = arbitraryRecord.chain((record) =>
    fc
      .record({
        partition: fc.option(fc.nat(), { nil: undefined }),
        timestamp: fc.option(fc.nat({ max: 4_102_444_800_000 }), { nil: undefined }),
      })
      .map((more) => ({ ...record, ...more })),
  );

  it('tells a null header value from an empty one', () => {
    const request = (value: Buffer) =>
      ({
        topic: 't',
        stream: 't',
        records: [
          {
            partition: undefined,
            key: undefined,
            value: undefined,
            timestamp: undefined,
            headers: [{ name: 'h', value }],
          },
        ],
      }) as unknown as PublishRequest;
    expect(fingerprint(request(NULL_HEADER_VALUE))).not.toBe(fingerprint(request(Buffer.alloc(0))));
  });

  it('is the digest it always was, for any records (refused ones skipped)', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string({ minLength: 1 }),
        fc.array(fc.oneof(placed, fc.constant(new InvalidInputError('x', { field: 'x' }))), {
          maxLength: 8,
        }),
        (topic, stream, records) => {
          const request = { topic, stream, records } as unknown as PublishRequest;
          expect(fingerprint(request)).toBe(fingerprintAsBefore(request));
        },
      ),
      { seed: PROPERTY_SEED },
    );
  });
});
