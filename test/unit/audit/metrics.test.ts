import { describe, expect, it } from 'vitest';
import { publishAuditMetrics } from '../../../functions/audit/metrics.js';
import type { AuditReport } from '../../../functions/core/audit/ports.js';
import { emittedMetrics, withMetric } from '../../helpers/emf.js';

const bucket = (duplicatesInLog: number, redelivered: number, lost = 0) => ({
  start: '2026-11-29T10:00:00.000Z',
  produced: 10,
  inLog: 10,
  notInLedger: 0,
  duplicatesInLog,
  lost,
  unknownAbsent: 0,
  processed: { billing: 10 },
  pending: { billing: 0 },
  redelivered: { billing: redelivered },
});

const report = (complete: boolean): AuditReport => ({
  topic: 'orders',
  at: '2026-11-29T10:10:00.000Z',
  complete,
  scanned: 20,
  scannedTotal: 20,
  untracked: 0,
  unread: 0,
  checkpoint: [],
  topicBuckets: [],
  settled: { landed: 2, notWritten: 1 },
  streams: [
    {
      stream: 'orders',
      produced: 20,
      inLog: 20,
      processed: { billing: 20 },
      // Only some duplicates are described one by one; the metric counts them all.
      producerDuplicates: [{ seq: 3, times: 2, copies: [] }],
      consumerDuplicates: [],
      lost: [{ from: 30, to: 33 }],
      pending: [{ group: 'billing', from: 7, to: 8 }],
      unknownLanded: [],
      unknownAbsent: [],
      // The first row sums buckets folded past the retention horizon: one lost there.
      buckets: [bucket(2, 1, 1), bucket(1, 3, 4)],
    },
  ],
});

describe('audit EMF metrics', () => {
  it('emits duplicates by layer, lost and pending per stream, in the Tally namespace', () => {
    const blobs = emittedMetrics(() => publishAuditMetrics(report(true)));
    expect(withMetric(blobs, 'Duplicates').map((b) => [b.layer, b.Duplicates])).toEqual([
      ['producer', 3],
      ['consumer', 4],
    ]);
    expect(withMetric(blobs, 'Lost')[0]).toMatchObject({ stream: 'orders', Lost: 5 });
    expect(withMetric(blobs, 'Pending')[0]).toMatchObject({ stream: 'orders', Pending: 2 });
    expect(withMetric(blobs, 'UnknownResolved')[0]).toMatchObject({
      topic: 'orders',
      UnknownResolved: 3,
    });
    expect(withMetric(blobs, 'RecordsRead')[0]).toMatchObject({ topic: 'orders', RecordsRead: 20 });
    expect(withMetric(blobs, 'Incomplete')[0]).toMatchObject({ topic: 'orders', Incomplete: 0 });
    expect(blobs.every((b) => b._aws.CloudWatchMetrics[0]?.Namespace === 'Tally')).toBe(true);
  });

  it('counts a run that stopped at its checkpoint', () => {
    const blobs = emittedMetrics(() => publishAuditMetrics(report(false)));
    expect(withMetric(blobs, 'Incomplete')[0]).toMatchObject({ Incomplete: 1 });
  });
});
