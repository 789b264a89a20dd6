import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { ReconcileReport } from '../core/reconcile.js';

const metrics = new Metrics({ namespace: 'Tally', serviceName: 'reconcile' });

/**
 * CloudWatch metrics (EMF) per group: max offset lag, max time lag, and anomalies by kind, so
 * alarms can watch a group without parsing reports.
 */
export function publishReconcileMetrics(report: ReconcileReport): void {
  for (const group of report.groups) {
    const lag = metrics.singleMetric();
    lag.addDimension('group', group.group);
    lag.addMetric('MaxOffsetLag', MetricUnit.Count, group.maxLag);
    const time = metrics.singleMetric();
    time.addDimension('group', group.group);
    time.addMetric('MaxTimeLag', MetricUnit.Seconds, group.maxTimeLagSeconds);
    for (const [kind, count] of Object.entries(group.anomalies)) {
      const anomaly = metrics.singleMetric();
      anomaly.addDimensions({ group: group.group, kind });
      anomaly.addMetric('Anomalies', MetricUnit.Count, count);
    }
  }
  if (!report.complete) {
    const partial = metrics.singleMetric();
    partial.addMetric('PartialRuns', MetricUnit.Count, 1);
  }
}
