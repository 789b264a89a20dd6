import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ReconcileReport } from '../../functions/core/reconcile.js';
import { publishReconcileMetrics } from '../../functions/reconcile/metrics.js';

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
      complete: true,
      partitionCount: 2,
      maxLag: 14,
      totalLag: 20,
      maxTimeLagSeconds: 90,
      anomalies: { REWIND: 1, LOST: 1 },
      partitions: [],
    },
  ],
});

describe('reconcile EMF metrics', () => {
  afterEach(() => vi.restoreAllMocks());

  function emitted(r: ReconcileReport) {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
      lines.push(String(chunk));
      return true;
    });
    publishReconcileMetrics(r);
    return lines
      .flatMap((l) => l.split('\n'))
      .filter((l) => l.includes('_aws'))
      .map(
        (l) =>
          JSON.parse(l) as Record<string, unknown> & {
            _aws: {
              CloudWatchMetrics: Array<{ Namespace: string; Metrics: Array<{ Name: string }> }>;
            };
          },
      );
  }

  it('emits max offset lag, max time lag and anomalies by kind per group, in the Tally namespace', () => {
    const blobs = emitted(report(true));
    const named = (name: string) =>
      blobs.filter((b) => b._aws.CloudWatchMetrics[0]?.Metrics.some((m) => m.Name === name));
    expect(named('MaxOffsetLag')[0]).toMatchObject({ group: 'billing', MaxOffsetLag: 14 });
    expect(named('MaxTimeLag')[0]).toMatchObject({ group: 'billing', MaxTimeLag: 90 });
    expect(named('Anomalies').map((b) => [b.kind, b.Anomalies])).toEqual([
      ['REWIND', 1],
      ['LOST', 1],
    ]);
    expect(blobs.every((b) => b._aws.CloudWatchMetrics[0]?.Namespace === 'Tally')).toBe(true);
    expect(named('PartialRuns')).toEqual([]);
  });

  it('counts a partial run', () => {
    const blobs = emitted(report(false));
    expect(blobs.some((b) => b.PartialRuns === 1)).toBe(true);
  });
});
