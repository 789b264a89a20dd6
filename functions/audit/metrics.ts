import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { AuditReport } from '../core/audit/ports.js';

const metrics = new Metrics({ namespace: 'Tally', serviceName: 'audit' });

const sum = (values: readonly number[]) => values.reduce((n, v) => n + v, 0);

/**
 * EMF per stream: duplicates by layer (extra copies in the log; extra deliveries to groups), lost,
 * pending; per topic: UNKNOWN outcomes settled, records read, and whether the run read the log to
 * its end (Incomplete = 1: it stopped at its checkpoint for lack of time).
 */
export function publishAuditMetrics(report: AuditReport): void {
  for (const stream of report.streams) {
    const emit = (name: string, value: number, dimensions: Record<string, string> = {}) => {
      const metric = metrics.singleMetric();
      metric.addDimensions({ topic: report.topic, stream: stream.stream, ...dimensions });
      metric.addMetric(name, MetricUnit.Count, value);
    };
    emit('Duplicates', sum(stream.buckets.map((b) => b.duplicatesInLog)), { layer: 'producer' });
    emit('Duplicates', sum(stream.buckets.flatMap((b) => Object.values(b.redelivered))), {
      layer: 'consumer',
    });
    // From the rows, like duplicates: the findings list only the newest lost ranges, and none
    // folded past the retention horizon; the rows' first one still counts those.
    emit('Lost', sum(stream.buckets.map((b) => b.lost)));
    emit('Pending', sum(stream.pending.map((r) => r.to - r.from + 1)));
  }
  // A single metric is flushed at its first addMetric: one per value.
  const emitTopic = (name: string, value: number) => {
    const metric = metrics.singleMetric();
    metric.addDimension('topic', report.topic);
    metric.addMetric(name, MetricUnit.Count, value);
  };
  emitTopic('UnknownResolved', report.settled.landed + report.settled.notWritten);
  emitTopic('RecordsRead', report.scanned);
  emitTopic('Incomplete', report.complete ? 0 : 1);
}
