import { describe, expect, it } from 'vitest';
import { FakeCluster } from '../helpers/fake-cluster.js';
import { memoryReconciler } from '../helpers/reconcile-stores.js';

// 120 days of hourly runs on an injected clock: a group is abandoned every two days (Kafka
// expires its offsets) while its topic keeps growing. Each reads LOST, with its last good offset
// and real lag, for the retention, however many runs that is; what the held findings keep is
// bounded by the retention and the window, not by the number of runs or of abandoned groups.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const RETENTION = 14 * DAY;
const WINDOW = 10;
const ABANDON_EVERY = 2 * DAY;
const START = Date.parse('2026-01-01T00:00:00Z');
const PARTITIONS = 4;

/** Held groups: abandoned within the retention, plus those retiring (a window of runs). */
const HELD_GROUPS = Math.ceil((RETENTION + WINDOW * HOUR) / ABANDON_EVERY) + 1;
/** One item per group (4 partitions in one chunk), plus the live group's. */
const ITEMS = HELD_GROUPS + 1;
/** A window of 10 readings and a held finding for 4 partitions: well under 4 KB. */
const ITEM_BYTES = 4096;

describe('held LOST findings over months', () => {
  it('stay for the retention and keep the history bounded', async () => {
    const cluster = new FakeCluster();
    const log = Array.from({ length: PARTITIONS }, () => ({ logStart: 0, logEnd: 0 }));
    cluster.topics.set('events', log);
    let now = START;
    const { reconciler, history } = memoryReconciler(cluster, () => now, {
      windowSize: WINDOW,
      graceMs: 0,
      retentionMs: RETENTION,
      pruneBudget: 200,
    });
    const abandoned = new Map<string, { at: number; offset: number }>();
    let maxItems = 0;
    let checked = 0;
    for (let run = 0; run < (120 * DAY) / HOUR; run++) {
      now = START + run * HOUR;
      for (const p of log) p.logEnd += 60;
      if (run % (ABANDON_EVERY / HOUR) === 0) {
        const group = `job-${run}`;
        const offset = log[0]?.logEnd ?? 0;
        cluster.groups.set(group, {
          state: 'Empty',
          members: [],
          commits: new Map(Array.from({ length: PARTITIONS }, (_, p) => [`events#${p}`, offset])),
        });
        abandoned.set(group, { at: now + HOUR, offset });
      }
      for (const [group, { at }] of abandoned) if (at === now) cluster.groups.delete(group);
      const report = await reconciler.run();
      maxItems = Math.max(maxItems, history.table.count);
      expect(history.table.maxItemBytes).toBeLessThan(ITEM_BYTES);
      for (const [group, { at, offset }] of abandoned) {
        const age = now - at;
        if (age < 0 || age >= RETENTION) continue;
        const found = report.groups.find((g) => g.group === group);
        const p0 = found?.partitions.find((p) => p.partition === 0);
        expect(p0, `${group} at ${age / HOUR} h`).toMatchObject({
          status: 'LOST',
          lost: { lastGoodOffset: offset },
          currentLag: (log[0]?.logEnd ?? 0) - offset,
        });
        checked++;
      }
    }
    expect(maxItems).toBeLessThanOrEqual(ITEMS);
    // Held groups did pile up to near the bound: the bound is not vacuous.
    expect(maxItems).toBeGreaterThanOrEqual(RETENTION / ABANDON_EVERY);
    expect(checked).toBeGreaterThan(10_000);
  });
});
