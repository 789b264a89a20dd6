import { describe, expect, it } from 'vitest';
import { forEachBounded } from '../../../../functions/core/shared/for-each-bounded.js';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('forEachBounded', () => {
  it('does every item once, with its index, never more than `limit` at a time', async () => {
    let inFlight = 0;
    let most = 0;
    const done: Array<[string, number]> = [];
    const items = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    await forEachBounded(items, 3, async (item, index) => {
      inFlight++;
      most = Math.max(most, inFlight);
      // Uneven durations: the lanes finish out of order.
      for (let i = 0; i < (index % 3) + 1; i++) await tick();
      done.push([item, index]);
      inFlight--;
    });
    expect(most).toBe(3);
    expect(done.sort()).toEqual(items.map((item, index) => [item, index]));
  });

  it('starts no more lanes than there are items, and resolves at once for none', async () => {
    let most = 0;
    let inFlight = 0;
    await forEachBounded([1, 2], 10, async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await tick();
      inFlight--;
    });
    expect(most).toBe(2);
    let called = false;
    await forEachBounded([], 4, async () => {
      called = true;
    });
    expect(called).toBe(false);
  });

  it('rejects with the first failure', async () => {
    const failure = new Error('item 2 failed');
    await expect(
      forEachBounded([0, 1, 2, 3], 2, async (item) => {
        await tick();
        if (item === 2) throw failure;
      }),
    ).rejects.toBe(failure);
  });
});
