import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

// patches/kafkajs+2.2.4.patch: kafkajs's read_committed filter (consumer/filterAbortedMessages)
// took the broker's list of aborted transactions as sorted by first offset and entered at most one
// per message. Kafka lists them in the order their ABORT markers were written, so transactions of
// two producers that overlap in a partition and end in the other order came out unsorted, and
// kafkajs handed a read_committed consumer the aborted records of one of them (chaos seed 203,
// RELIABILITY.md "The transactional workload"). Run on the real broker: txn-read-committed.test.ts.

const require = createRequire(import.meta.url);
interface Message {
  offset: string;
  key: Buffer | null;
  value: string;
  batchContext: { producerId: string; inTransaction: boolean };
}
const filterAborted = require('kafkajs/src/consumer/filterAbortedMessages.js') as (input: {
  messages: Message[];
  abortedTransactions: Array<{ firstOffset: string; producerId: string }>;
}) => Message[];

const ABORT = Buffer.from([0, 0, 0, 0]);
const record = (offset: number, producerId: string, value: string): Message => ({
  offset: String(offset),
  key: null,
  value,
  batchContext: { producerId, inTransaction: true },
});
const abortMarker = (offset: number, producerId: string): Message => ({
  offset: String(offset),
  key: ABORT,
  value: '',
  batchContext: { producerId, inTransaction: true },
});
const plain = (offset: number, value: string): Message => ({
  offset: String(offset),
  key: null,
  value,
  batchContext: { producerId: '-1', inTransaction: false },
});

describe("kafkajs's read_committed filter (patched)", () => {
  it('drops the records of overlapping aborted transactions listed in the order they ended', () => {
    // Producer 7 opens at 0, producer 9 at 1; 9 aborts first (marker 3), then 7 (marker 4).
    const messages = [
      record(0, '7', 'a0'),
      record(1, '9', 'b0'),
      record(2, '7', 'a1'),
      abortMarker(3, '9'),
      abortMarker(4, '7'),
      plain(5, 'after'),
    ];
    const abortedTransactions = [
      { firstOffset: '1', producerId: '9' },
      { firstOffset: '0', producerId: '7' },
    ];
    const shown = filterAborted({ messages, abortedTransactions }).filter((m) => m.value !== '');
    expect(shown.map((m) => m.value)).toEqual(['after']);
  });

  it('enters every aborted transaction a message has reached, not one per message', () => {
    // The fetch starts at 10, inside both transactions (from 2 and 4): both are aborted.
    const messages = [
      record(10, '9', 'b'),
      record(11, '7', 'a'),
      abortMarker(12, '7'),
      abortMarker(13, '9'),
      plain(14, 'after'),
    ];
    const abortedTransactions = [
      { firstOffset: '2', producerId: '7' },
      { firstOffset: '4', producerId: '9' },
    ];
    const shown = filterAborted({ messages, abortedTransactions }).filter((m) => m.value !== '');
    expect(shown.map((m) => m.value)).toEqual(['after']);
  });

  it('keeps committed transactions and a producer’s next transaction after its abort', () => {
    const messages = [
      record(0, '7', 'aborted'),
      abortMarker(1, '7'),
      record(2, '7', 'committed'),
      record(3, '9', 'other'),
    ];
    const abortedTransactions = [{ firstOffset: '0', producerId: '7' }];
    const shown = filterAborted({ messages, abortedTransactions }).filter((m) => m.value !== '');
    expect(shown.map((m) => m.value)).toEqual(['committed', 'other']);
  });
});
