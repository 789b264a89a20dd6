import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { AuditReport } from '../core/audit.js';

const metrics = new Metrics({ namespace: 'Tally', serviceName: 'audit' });

/** EMF per stream: duplicates by layer, lost, pending, UNKNOWN outcomes settled. */
export function publishAuditMetrics(report: AuditReport): void {
  for (const stream of report.streams) {
    const emit = (name: string, value: number, dimensions: Record<string, string> = {}) => {
      const metric = metrics.singleMetric();
      metric.addDimensions({ topic: report.topic, stream: stream.stream, ...dimensions });
      metric.addMetric(name, MetricUnit.Count, value);
    };
    emit('Duplicates', stream.producerDuplicates.length, { layer: 'producer' });
    emit(
      'Duplicates',
      stream.consumerDuplicates.reduce((n, d) => n + (d.to - d.from + 1), 0),
      { layer: 'consumer' },
    );
    emit(
      'Lost',
      stream.lost.reduce((n, r) => n + (r.to - r.from + 1), 0),
    );
    emit(
      'Pending',
      stream.pending.reduce((n, r) => n + (r.to - r.from + 1), 0),
    );
  }
  const settled = metrics.singleMetric();
  settled.addDimension('topic', report.topic);
  settled.addMetric(
    'UnknownResolved',
    MetricUnit.Count,
    report.settled.landed + report.settled.notWritten,
  );
}
