import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { PublishResult } from '../core/publish/ports.js';

const metrics = new Metrics({ namespace: 'Tally', serviceName: 'publish' });

const OUTCOMES = ['ACKED', 'FAILED', 'NOT_SENT', 'UNKNOWN'] as const;
const NAMES = {
  ACKED: 'RecordsAcked',
  FAILED: 'RecordsFailed',
  NOT_SENT: 'RecordsNotSent',
  UNKNOWN: 'RecordsUnknown',
} as const;

/**
 * One EMF document per publish request, dimension `topic`: the records by outcome
 * (RecordsAcked, RecordsFailed, RecordsNotSent, RecordsUnknown; RecordsRefused for records
 * refused before sending) and PublishLatency, the request's time in the function (ms).
 */
export function publishRequestMetrics(result: PublishResult, latencyMs: number): void {
  const counts = { ACKED: 0, FAILED: 0, NOT_SENT: 0, UNKNOWN: 0 };
  let refused = 0;
  for (const record of result.results) {
    if (record.kind !== 'published') refused++;
    else if (record.outcome.status in counts)
      counts[record.outcome.status as keyof typeof counts]++;
  }
  metrics.addDimension('topic', result.topic);
  for (const outcome of OUTCOMES)
    metrics.addMetric(NAMES[outcome], MetricUnit.Count, counts[outcome]);
  metrics.addMetric('RecordsRefused', MetricUnit.Count, refused);
  metrics.addMetric('PublishLatency', MetricUnit.Milliseconds, latencyMs);
  metrics.publishStoredMetrics();
}
