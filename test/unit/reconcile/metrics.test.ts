import { describe, expect, it } from 'vitest';
import type { ReconcileReport } from '../../../functions/core/reconcile/reconciler.js';
import { publishReconcileMetrics } from '../../../functions/reconcile/metrics.js';
import { emittedMetrics, withMetric } from '../../helpers/emf.js';

const report = (complete: boolean): ReconcileReport => ({
  runAt: '2026-11-29T17:00:00.000Z',
  complete,
  unreadable: complete ? [] : ['group x: describe failed'],
  adminCalls: 4,
  historyConflicts: 0,
  mappings: { written: 0, changed: 0, removed: 0, keptNewer: 0, details: [] },
  groups: [
    {
      group: 'billing',
      state: 'Empty',
      status: 'ERR',
      complete: 1,
      partitionCount: 2,
      maxLag: 14,
      totalLag: 20,
      maxTimeLagSeconds: 90,
      anomalies: { REWIND: 1, LOST: 1 },
      partitions: [
        { topic: 'orders', currentLag: 14 },
        { topic: 'orders', currentLag: 4 },
        { topic: 'refunds', currentLag: 2 },
      ].map(
        (p, partition) =>
          ({
            ...p,
            partition,
            status: 'OK',
            complete: 1,
            timeLagSeconds: null,
            owner: null,
            clientId: null,
            committed: 0,
            logStart: 0,
            logEnd: 0,
            start: null,
            end: null,
          }) as const,
      ),
    },
  ],
});

describe('reconcile EMF metrics', () => {
  const emitted = (r: ReconcileReport) => emittedMetrics(() => publishReconcileMetrics(r));

  it('emits max offset lag, max time lag and anomalies by kind per group, in the Tally namespace', () => {
    const blobs = emitted(report(true));
    const named = (name: string) => withMetric(blobs, name);
    expect(named('MaxOffsetLag')[0]).toMatchObject({ group: 'billing', MaxOffsetLag: 14 });
    expect(named('MaxTimeLag')[0]).toMatchObject({ group: 'billing', MaxTimeLag: 90 });
    expect(named('Anomalies').map((b) => [b.kind, b.Anomalies])).toEqual([
      ['REWIND', 1],
      ['LOST', 1],
    ]);
    expect(blobs.every((b) => b._aws.CloudWatchMetrics[0]?.Namespace === 'Tally')).toBe(true);
    expect(named('PartialRuns')).toEqual([]);
  });

  it('emits total lag and status (Burrow numbers) per group, and total lag per group and topic', () => {
    const blobs = emitted(report(true));
    expect(withMetric(blobs, 'TotalOffsetLag')[0]).toMatchObject({
      group: 'billing',
      TotalOffsetLag: 20,
    });
    expect(withMetric(blobs, 'GroupStatus')[0]).toMatchObject({ group: 'billing', GroupStatus: 3 });
    expect(
      withMetric(blobs, 'TopicTotalOffsetLag').map((b) => [b.topic, b.TopicTotalOffsetLag]),
    ).toEqual([
      ['orders', 18],
      ['refunds', 2],
    ]);
  });

  it('counts a partial run', () => {
    const blobs = emitted(report(false));
    expect(blobs.some((b) => b.PartialRuns === 1)).toBe(true);
  });
});
