import { Buffer } from 'node:buffer';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { murmur2, partitionForKey } from '../../../../functions/core/shared/murmur2.js';

const kafkajsMurmur2 = createRequire(import.meta.url)(
  'kafkajs/src/producer/partitioners/default/murmur2.js',
) as (key: Buffer | string) => number;

/** Deterministic bytes, so a failure can be reproduced. */
function randomBytes(seed: number, count: number): Uint8Array[] {
  let state = seed >>> 0;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state >>> 24;
  };
  const arrays: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const bytes = new Uint8Array(next() % 70);
    for (let j = 0; j < bytes.length; j++) bytes[j] = next();
    arrays.push(bytes);
  }
  return arrays;
}

describe('murmur2', () => {
  // org.apache.kafka.common.utils.UtilsTest#testMurmur2
  const javaVectors: ReadonlyArray<readonly [string, number]> = [
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ['abc', 479470107],
  ];

  it.each(javaVectors)('hashes %j like Kafka (Java) does', (text, expected) => {
    expect(murmur2(Buffer.from(text, 'utf8'))).toBe(expected);
  });

  it('returns a signed 32-bit integer', () => {
    for (const bytes of randomBytes(7, 200)) {
      const h = murmur2(bytes);
      expect(Number.isInteger(h)).toBe(true);
      expect(h).toBe(h | 0);
    }
  });

  it('accepts a plain Uint8Array as well as a Buffer', () => {
    const text = 'a-little-bit-longer-string';
    expect(murmur2(new Uint8Array(Buffer.from(text)))).toBe(murmur2(Buffer.from(text)));
  });

  it('agrees with kafkajs on every tail length, including the empty array', () => {
    for (let length = 0; length <= 9; length++) {
      const bytes = Buffer.alloc(length, 0xff);
      expect(murmur2(bytes), `length ${length}`).toBe(kafkajsMurmur2(bytes));
    }
    expect(murmur2(new Uint8Array(0))).toBe(kafkajsMurmur2(Buffer.alloc(0)));
  });

  it('agrees with kafkajs on a few hundred random byte arrays', () => {
    const arrays = randomBytes(20261129, 400);
    const disagreements = arrays
      .map((bytes) => ({
        hex: Buffer.from(bytes).toString('hex'),
        ours: murmur2(bytes),
        kafkajs: kafkajsMurmur2(Buffer.from(bytes)),
      }))
      .filter((r) => r.ours !== r.kafkajs);
    expect(disagreements).toEqual([]);
    // The generator really produced varied inputs.
    expect(new Set(arrays.map((a) => a.length)).size).toBeGreaterThan(30);
  });
});

describe('partitionForKey', () => {
  it('is in range for every partition count', () => {
    const keys = randomBytes(42, 300);
    for (const count of [1, 2, 3, 7, 12, 100]) {
      for (const key of keys) {
        const p = partitionForKey(key, count);
        expect(Number.isInteger(p)).toBe(true);
        expect(p).toBeGreaterThanOrEqual(0);
        expect(p).toBeLessThan(count);
      }
    }
  });

  it('is stable for equal keys', () => {
    for (const key of randomBytes(3, 50)) {
      expect(partitionForKey(Buffer.from(key), 12)).toBe(partitionForKey(Buffer.from(key), 12));
    }
  });

  it("is Kafka's toPositive(murmur2(key)) % partitions", () => {
    // murmur2("foobar") = -790332482; & 0x7fffffff = 1357151166
    expect(partitionForKey(Buffer.from('foobar'), 10)).toBe(1357151166 % 10);
    // murmur2("abc") = 479470107 (positive)
    expect(partitionForKey(Buffer.from('abc'), 7)).toBe(479470107 % 7);
    for (const [text, count] of [
      ['21', 3],
      ['a-little-bit-long-string', 6],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', 24],
    ] as const) {
      const expected = (kafkajsMurmur2(Buffer.from(text)) & 0x7fffffff) % count;
      expect(partitionForKey(Buffer.from(text), count)).toBe(expected);
    }
  });

  it('spreads keys over all partitions', () => {
    const seen = new Set(randomBytes(99, 300).map((key) => partitionForKey(key, 6)));
    expect(seen.size).toBe(6);
  });

  it('puts every key on partition 0 of a one-partition topic', () => {
    expect(randomBytes(5, 30).every((key) => partitionForKey(key, 1) === 0)).toBe(true);
  });
});
