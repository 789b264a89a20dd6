import { describe, expect, it } from 'vitest';
import { headerValue, tallyHeaders } from '../../../functions/consumer/tally-headers.js';

const bytes = (text: string) => [...Buffer.from(text)];

describe('tallyHeaders', () => {
  it("reads Lambda's MSK header bytes and kafkajs' Buffers alike", () => {
    const msk = {
      headers: [
        { 'tally.stream': bytes('orders') },
        { 'tally.seq': bytes('42') },
        { 'tally.session': bytes('s-1') },
        { 'tally.idempotency-key': bytes('k') },
      ],
    };
    const kafkajs = {
      headers: {
        'tally.stream': Buffer.from('orders'),
        'tally.seq': [Buffer.from('42'), Buffer.from('43')],
        'tally.session': 's-1',
        'tally.idempotency-key': Buffer.from('k'),
      },
    };
    const expected = { stream: 'orders', seq: 42, session: 's-1', idempotencyKey: 'k' };
    expect(tallyHeaders(msk)).toEqual(expected);
    expect(tallyHeaders(kafkajs)).toEqual(expected);
  });

  it('gives no seq for a missing or malformed one', () => {
    for (const seq of ['0', '-1', '1e2', ' 7', '0x10', '']) {
      expect(tallyHeaders({ headers: { 'tally.seq': seq } }).seq).toBeUndefined();
    }
    expect(tallyHeaders({})).toEqual({
      stream: undefined,
      seq: undefined,
      session: undefined,
      idempotencyKey: undefined,
    });
    expect(headerValue({ headers: [{ other: bytes('x') }] }, 'tally.stream')).toBeUndefined();
  });
});
