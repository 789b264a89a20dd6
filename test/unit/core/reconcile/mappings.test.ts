import { describe, expect, it } from 'vitest';
import { repairMappings } from '../../../../functions/core/reconcile/mappings.js';
import type { ClusterSnapshot, StoredMapping } from '../../../../functions/core/reconcile/ports.js';
import { memoryMappings } from '../../../helpers/reconcile-stores.js';

const GRACE = 60_000;
const NOW = Date.parse('2026-06-01T12:00:00Z');

const stored = (pk: string, sk: string, lastSeenAt: number): StoredMapping => ({
  pk,
  sk,
  lastSeenAt,
  attributes: { memberId: 'm', clientId: 'c', clientHost: '/h' },
});

/** Group `a` read with one member; `b` unreadable when `partial`, else gone. */
function snapshot(partial: boolean): ClusterSnapshot {
  return {
    observedAt: NOW,
    adminCalls: 3,
    unreadable: partial ? ['group b: describe failed (test)'] : [],
    groups: [
      {
        groupId: 'a',
        state: 'Stable',
        members: [{ memberId: 'm2', clientId: 'c2', clientHost: '/h2', assignment: { t: [0] } }],
        partitions: [],
      },
    ],
  };
}

async function storeWithGoneClients() {
  const store = memoryMappings();
  for (const m of [
    stored('client#/h1#c1', 'group#a', NOW - 10 * GRACE), // a's member that left long ago
    stored('group#a', 'partition#t#1', NOW - 10 * GRACE),
    stored('client#/h3#c3', 'group#a', NOW - GRACE / 2), // left within the grace period
    stored('client#/hb#cb', 'group#b', NOW - 10 * GRACE),
    stored('group#b', 'partition#u#0', NOW - 10 * GRACE),
  ]) {
    await store.upsert(m);
  }
  return store;
}

const keys = async (store: Awaited<ReturnType<typeof storeWithGoneClients>>) =>
  (await store.list()).map((m) => `${m.pk} ${m.sk}`).sort();

describe('repairMappings', () => {
  it('on a partial snapshot removes gone clients of the groups it read, and keeps the unread', async () => {
    const store = await storeWithGoneClients();
    const repairs = await repairMappings(store, snapshot(true), GRACE);
    expect(repairs.removed).toBe(2);
    expect(await keys(store)).toEqual([
      'client#/h2#c2 group#a',
      'client#/h3#c3 group#a',
      'client#/hb#cb group#b',
      'group#a partition#t#0',
      'group#b partition#u#0',
    ]);
  });

  it('on a complete snapshot also removes the mappings of a gone group after the grace', async () => {
    const store = await storeWithGoneClients();
    const repairs = await repairMappings(store, snapshot(false), GRACE);
    expect(repairs.removed).toBe(4);
    expect(await keys(store)).toEqual([
      'client#/h2#c2 group#a',
      'client#/h3#c3 group#a',
      'group#a partition#t#0',
    ]);
  });
});
