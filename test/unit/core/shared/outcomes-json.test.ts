import { describe, expect, it } from 'vitest';
import {
  decodeOutcome,
  type EncodedOutcome,
  encodeOutcome,
  outcomesJson,
  type RecordOutcome,
} from '../../../../functions/core/shared/outcomes.js';
import { seededRandom } from '../../../chaos/random.js';

// The ledger's `outcomes` attribute is this text; ledgers written before outcomesJson hold
// JSON.stringify(outcomes.map(encodeOutcome)), so the two must be the same text on any input.

/** The same varied inputs every run (mulberry32, the chaos run's generator). */
const random = seededRandom;

/** Text that needs JSON escaping now and then: quotes, backslashes, controls, non-ASCII, lone surrogates. */
const PIECES = [
  'sent by session s-abc, no answer recorded',
  'timed out',
  '"quoted"',
  'back\\slash',
  'line\nbreak\ttab\u0000nul\u001f',
  'déjà vu ✓',
  '😀 emoji',
  '\ud800 lone high',
  'lone low \udc00',
  '\u007f del',
  '',
  'not sent: an earlier record batch of partition 2 was not acknowledged (UNKNOWN)',
];

function outcomes(seed: number, count: number): RecordOutcome[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)] as T;
  const text = () => (next() < 0.5 ? pick(PIECES) : `${pick(PIECES)}${pick(PIECES)}`);
  const list: RecordOutcome[] = [];
  let last: RecordOutcome | undefined;
  for (let i = 0; i < count; i++) {
    // Runs of one outcome (a block's UNKNOWNs share one message), then a change.
    if (last !== undefined && last.status !== 'ACKED' && next() < 0.4) {
      list.push(last);
      continue;
    }
    const partition = pick([0, 1, 7, 2 ** 31 - 1, -0, -1, 0.5, Number.NaN, Infinity]);
    const offset = pick(['0', '42', '9007199254740993', '9223372036854775807', '"odd"', '']);
    const outcome: RecordOutcome = pick([
      { status: 'ACKED', partition, offset },
      { status: 'ACKED', partition: i, offset: String(1000 + i) },
      { status: 'FAILED', kafkaError: pick(['MESSAGE_TOO_LARGE', 'odd "error"']), message: text() },
      { status: 'NOT_SENT', message: text() },
      { status: 'UNKNOWN', message: text() },
      { status: 'VOID', message: text() },
    ]);
    list.push(outcome);
    last = outcome;
  }
  return list;
}

describe('outcomesJson', () => {
  it('writes the text JSON.stringify made of the encoded outcomes, on varied outcomes', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const list = outcomes(seed, 1 + (seed % 50));
      expect(outcomesJson(list)).toBe(JSON.stringify(list.map(encodeOutcome)));
    }
  });

  it('writes an empty block and a large block as before', () => {
    expect(outcomesJson([])).toBe(JSON.stringify([]));
    const big = outcomes(7, 10_000);
    expect(outcomesJson(big)).toBe(JSON.stringify(big.map(encodeOutcome)));
  });

  it('reads back as the outcomes it was written from (partitions JSON keeps)', () => {
    const kept = (n: number) => Number.isFinite(n) && !Object.is(n, -0);
    const list = outcomes(3, 500).map((o) =>
      o.status === 'ACKED' && !kept(o.partition) ? { ...o, partition: 5 } : o,
    );
    const read = (JSON.parse(outcomesJson(list)) as EncodedOutcome[]).map(decodeOutcome);
    expect(read).toEqual(list);
  });
});
