import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { ReconcileReport } from '../core/reconcile/reconciler.js';

const metrics = new Metrics({ namespace: 'Tally', serviceName: 'reconcile' });

/** A group status as a number, as Burrow's status constants (OK 1, WARN 2, ERR 3). */
const STATUS_CODE = { OK: 1, WARN: 2, ERR: 3 } as const;

/**
 * CloudWatch metrics (EMF) per group: max and total offset lag, max time lag, status as a number
 * and anomalies by kind; per group and topic: total offset lag. Alarms and lag dashboards watch
 * a group without parsing reports.
 */
export function publishReconcileMetrics(report: ReconcileReport): void {
  for (const group of report.groups) {
    const lag = metrics.singleMetric();
    lag.addDimension('group', group.group);
    lag.addMetric('MaxOffsetLag', MetricUnit.Count, group.maxLag);
    const total = metrics.singleMetric();
    total.addDimension('group', group.group);
    total.addMetric('TotalOffsetLag', MetricUnit.Count, group.totalLag);
    const status = metrics.singleMetric();
    status.addDimension('group', group.group);
    status.addMetric('GroupStatus', MetricUnit.Count, STATUS_CODE[group.status]);
    const topics = new Map<string, number>();
    for (const p of group.partitions) {
      topics.set(p.topic, (topics.get(p.topic) ?? 0) + (p.currentLag ?? 0));
    }
    for (const [topic, total] of topics) {
      const topicLag = metrics.singleMetric();
      topicLag.addDimensions({ group: group.group, topic });
      topicLag.addMetric('TopicTotalOffsetLag', MetricUnit.Count, total);
    }
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
