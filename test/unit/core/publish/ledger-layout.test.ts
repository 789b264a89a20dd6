import { describe, expect, it } from 'vitest';
import {
  DAY_MS,
  expiresAtSeconds,
  isExpired,
  LEDGER_SHARDS,
  ledgerBlockKeys,
  ledgerPartitionKeys,
  ledgerRetention,
  ledgerShard,
  ledgerShardKey,
} from '../../../../functions/core/publish/ledger-layout.js';

const RETENTION = 30 * DAY_MS;

describe('ledgerShard', () => {
  it('is a function of the first seq alone, within 0..shards-1', () => {
    for (const seq of [1, 2, 63, 64, 1_000_000, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER]) {
      const shard = ledgerShard(seq);
      expect(shard).toBe(ledgerShard(seq));
      expect(shard).toBeGreaterThanOrEqual(0);
      expect(shard).toBeLessThan(LEDGER_SHARDS);
    }
    expect(ledgerShardKey('orders', 5)).toBe(`orders#${ledgerShard(5)}`);
    expect(ledgerShard(12345, 1)).toBe(0);
  });

  it.each([1, 10, 64, 100, 1000])(
    'spreads blocks of %i seqs evenly: the busiest key takes under 1.3 × its share',
    (size) => {
      const counts = new Array<number>(LEDGER_SHARDS).fill(0);
      const blocks = 64_000;
      for (let i = 0; i < blocks; i++) {
        const shard = ledgerShard(1 + i * size);
        counts[shard] = (counts[shard] ?? 0) + 1;
      }
      expect(Math.max(...counts)).toBeLessThan((1.3 * blocks) / LEDGER_SHARDS);
      expect(Math.min(...counts)).toBeGreaterThan((0.7 * blocks) / LEDGER_SHARDS);
    },
  );

  it('lists every shard key of a stream, its VOID ranges, then the key before sharding', () => {
    expect(ledgerPartitionKeys('s', 4)).toEqual(['s#0', 's#1', 's#2', 's#3', 's#void', 's']);
    expect(ledgerBlockKeys('s', 4)).toEqual(['s#0', 's#1', 's#2', 's#3', 's']);
  });
});

describe('TTL', () => {
  it('expires a block the retention after its write, to the second, rounded up', () => {
    const at = Date.UTC(2026, 0, 1, 12, 0, 0, 250);
    expect(expiresAtSeconds(at, RETENTION)).toBe(Math.ceil((at + RETENTION) / 1000));
    const ttl = expiresAtSeconds(at, RETENTION);
    expect(isExpired(ttl, at + RETENTION - 1000)).toBe(false);
    expect(isExpired(ttl, ttl * 1000)).toBe(true);
    expect(isExpired(undefined, Number.MAX_SAFE_INTEGER)).toBe(false);
  });
});

describe('ledgerRetention', () => {
  const day = (d: number) => d * DAY_MS;
  // Day 100 wrote seqs from 1, day 101 from 500, day 140 from 900.
  const marks = [
    { day: 101, firstSeq: 500 },
    { day: 100, firstSeq: 1 },
    { day: 140, firstSeq: 900 },
  ];

  it('keeps everything while no day has begun expiring', () => {
    const retention = ledgerRetention(marks, day(129), RETENTION);
    expect(retention.keptFrom).toBe(1);
  });

  it('keeps from the first seq of the oldest day not yet expiring, and dates what expired', () => {
    const retention = ledgerRetention(marks, day(131) + 1, RETENTION);
    expect(retention.keptFrom).toBe(900);
    expect(retention.expiredOn(3)).toEqual({ day: '1970-05-11', exact: true });
    expect(retention.expiredOn(700)).toEqual({ day: '1970-05-12', exact: true });
  });

  it('says "on or before" for a seq older than every mark', () => {
    const retention = ledgerRetention([{ day: 101, firstSeq: 500 }], day(200), RETENTION, {
      lastSeq: 600,
      updatedAt: day(101),
    });
    expect(retention.keptFrom).toBe(601);
    expect(retention.expiredOn(10)).toEqual({ day: '1970-05-12', exact: false });
  });

  it('without marks, knows a stream expired only from a counter that stopped long ago', () => {
    expect(ledgerRetention([], day(200), RETENTION).keptFrom).toBe(1);
    const counter = { lastSeq: 42, updatedAt: day(100) };
    expect(ledgerRetention([], day(129), RETENTION, counter).keptFrom).toBe(1);
    expect(ledgerRetention([], day(133), RETENTION, counter).keptFrom).toBe(43);
  });
});
