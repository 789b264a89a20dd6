import { describe, expect, it } from 'vitest';
import { createHeaderReader, sameBytes } from '../../../../functions/adapters/kafka/log-scanner.js';

// The audit's scan reads `tally.*` headers of every record; a value that repeats the previous
// record's reuses its text. These records alternate streams and sessions, repeat them, and
// carry the odd shapes kafkajs can hand over (a repeated header, a null value).
describe('tally.* headers as the scan reads them', () => {
  const b = (text: string) => Buffer.from(text);

  it('gives each record its own values when streams and sessions alternate and repeat', () => {
    const read = createHeaderReader();
    const records = [
      { 'tally.stream': 'orders', 'tally.seq': '1', 'tally.session': 's-a', other: 'x' },
      { 'tally.stream': 'orders', 'tally.seq': '2', 'tally.session': 's-a' },
      { 'tally.stream': 'payments', 'tally.seq': '1', 'tally.session': 's-a' },
      { 'tally.stream': 'orders', 'tally.seq': '3', 'tally.session': 's-b' },
      { 'tally.stream': 'orders', 'tally.seq': '3', 'tally.session': 's-b' },
    ];
    const seen = records.map((headers) =>
      read(Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, b(value)]))),
    );
    expect(seen).toEqual(
      records.map(({ other: _, ...tally }) => tally as Record<string, string | undefined>),
    );
  });

  it('takes the first value of a repeated header, and a null value as absent', () => {
    const read = createHeaderReader();
    expect(read({ 'tally.stream': [b('first'), b('second')], 'tally.session': null })).toEqual({
      'tally.stream': 'first',
      'tally.session': undefined,
    });
    expect(read({ 'tally.stream': b('second') })).toEqual({ 'tally.stream': 'second' });
    expect(read(undefined)).toEqual({});
  });

  it('reads no tally.* header beyond stream, seq and session', () => {
    const read = createHeaderReader();
    expect(read({ 'tally.seq': b('4'), 'tally.idempotency-key': b('k-1') })).toEqual({
      'tally.seq': '4',
    });
  });

  it('compares bytes, short and long, as Buffer.equals does', () => {
    for (const [x, y] of [
      ['orders', 'orders'],
      ['orders', 'ordera'],
      ['orders', 'order'],
      ['', ''],
      ['a'.repeat(100), 'a'.repeat(100)],
      ['a'.repeat(100), `${'a'.repeat(99)}b`],
    ] as const)
      expect(sameBytes(b(x), b(y)), `${x} / ${y}`).toBe(b(x).equals(b(y)));
  });
});
