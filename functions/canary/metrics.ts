import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { CanaryReport } from '../core/canary/run-canary.js';

const metrics = new Metrics({ namespace: 'Tally', serviceName: 'canary' });

/**
 * EMF per run, dimension `topic`: CanaryAvailability (% of canary publishes answered ACKED),
 * CanaryPublishLatencyP50/P99 (ms per request), CanaryReadBackMs, CanaryLost (ACKED and absent
 * from the log), CanaryDuplicated (one seq at several offsets).
 */
export function publishCanaryMetrics(report: CanaryReport): void {
  const emit = (
    name: string,
    unit: (typeof MetricUnit)[keyof typeof MetricUnit],
    value: number,
  ) => {
    const metric = metrics.singleMetric();
    metric.addDimension('topic', report.topic);
    metric.addMetric(name, unit, value);
  };
  emit('CanaryAvailability', MetricUnit.Percent, report.availability * 100);
  if (report.publishLatencyMs) {
    emit('CanaryPublishLatencyP50', MetricUnit.Milliseconds, report.publishLatencyMs.p50);
    emit('CanaryPublishLatencyP99', MetricUnit.Milliseconds, report.publishLatencyMs.p99);
  }
  emit('CanaryReadBackMs', MetricUnit.Milliseconds, report.readBackMs);
  emit('CanaryLost', MetricUnit.Count, report.lost.length);
  emit('CanaryDuplicated', MetricUnit.Count, report.duplicated.length);
}
