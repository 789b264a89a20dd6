import { describe, expect, it } from 'vitest';
import { createOnceStore } from '../../functions/adapters/dynamodb/once-store.js';
import { type DoneRange, MAX_RANGES } from '../../functions/core/once/done-ranges.js';
import { localTablesForFile } from '../helpers/local-tables.js';

// The once guard's store on the local DynamoDB API (dynalite): single-item conditional writes.
describe('once store (dynalite)', () => {
  const local = localTablesForFile('once');
  const store = () => createOnceStore(local.documents, local.table('OnceTable'));
  const at = (seq: number, stream = 'orders') => ({ group: 'billing', stream, seq });
  const claim = (token: string, now: number, expiresAt = now + 60_000) => ({
    token,
    lane: 'orders-0',
    expiresAt,
    now,
  });

  it('claims once; a live claim is held; a done mark is done; release frees it', async () => {
    const s = store();
    expect(await s.claim(at(1), claim('a', 1000))).toBe('claimed');
    expect(await s.claim(at(1), claim('b', 2000))).toBe('held');
    expect(await s.finish(at(1), 'a', 3000)).toBe(true);
    expect(await s.claim(at(1), claim('b', 4000))).toBe('done');
    // Long after, a done mark is still done (expiry is for claims only).
    expect(await s.claim(at(1), claim('b', 10_000_000))).toBe('done');
    expect(await s.claim(at(2), claim('a', 1000))).toBe('claimed');
    await s.release(at(2), 'not-mine');
    expect(await s.claim(at(2), claim('b', 1500))).toBe('held');
    await s.release(at(2), 'a');
    expect(await s.claim(at(2), claim('b', 1500))).toBe('claimed');
    // Marks to fold: the DONE one; a live claim only once dead for the horizon.
    const all = { deadBefore: 0, limit: 10, skip: () => false };
    expect(await s.marks('billing', 'orders', all)).toEqual([
      [1, { state: 'DONE', doneAt: 3000, lane: 'orders-0', expiresAt: 0 }],
    ]);
    expect(
      (await s.marks('billing', 'orders', { ...all, deadBefore: 70_000 })).map(([q]) => q),
    ).toEqual([1, 2]);
    expect(await s.marks('billing', 'orders', { ...all, skip: (q) => q === 1 })).toEqual([]);
  });

  it('lets a new claimant take over a claim once it has expired, and only then', async () => {
    const s = store();
    expect(await s.claim(at(10), claim('dead', 1000, 5000))).toBe('claimed');
    expect(await s.claim(at(10), claim('next', 4999))).toBe('held');
    expect(await s.claim(at(10), claim('next', 5001))).toBe('claimed');
    // The holder that came back late cannot mark it done, nor release it.
    expect(await s.finish(at(10), 'dead', 6000)).toBe(false);
    await s.release(at(10), 'dead');
    expect(await s.finish(at(10), 'next', 6000)).toBe(true);
  });

  it('of concurrent claimants exactly one wins, fresh or on an expired claim', async () => {
    const s = store();
    const race = (seq: number, now: number) =>
      Promise.all(
        Array.from({ length: 12 }, (_, i) => store().claim(at(seq), claim(`c${i}`, now))),
      );
    const fresh = await race(20, 1000);
    expect(fresh.filter((r) => r === 'claimed')).toHaveLength(1);
    expect(fresh.filter((r) => r === 'held')).toHaveLength(11);
    const takeover = await race(20, 1000 + 60_001);
    expect(takeover.filter((r) => r === 'claimed')).toHaveLength(1);
    const winner = `c${takeover.indexOf('claimed')}`;
    expect(await s.finish(at(20), winner, 70_000)).toBe(true);
  });

  it('saves ranges over the version read, drops folded marks, and holds MAX_RANGES in one item', async () => {
    const s = store();
    const one = (ranges: DoneRange[]) => ({ ranges, pending: [] });
    expect(await s.saveRanges('billing', 'big', 'big-0', one([[1, 5, 100]]), 0)).toBe(true);
    expect(await s.saveRanges('billing', 'big', 'big-0', one([[1, 6, 100]]), 0)).toBe(false);
    // The stated bound at its worst: MAX_RANGES ranges of 13-digit seqs and times.
    const base = 1_000_000_000_000;
    const ranges: DoneRange[] = Array.from({ length: MAX_RANGES }, (_, i) => [
      base + i * 10,
      base + i * 10 + 5,
      1_764_547_200_000 + i,
    ]);
    expect(JSON.stringify(ranges).length).toBeLessThan(180_000);
    const pending = [[1_764_547_200_000, [[7, 9]]] as const];
    expect(await s.saveRanges('billing', 'big', 'big-0', { ranges, pending }, 1)).toBe(true);
    for (const seq of [7, 8, 9]) {
      await s.claim(at(seq, 'big'), claim('t', 1));
      await s.finish(at(seq, 'big'), 't', 2);
    }
    await s.dropMarks('billing', 'big', [7, 8]);
    expect((await s.read('billing', 'big')).get('big-0')).toEqual({ ranges, pending, version: 2 });
    const left = await s.marks('billing', 'big', { deadBefore: 0, limit: 10, skip: () => false });
    expect(left.map(([seq]) => seq)).toEqual([9]);
  });
});
