import type { GroupReport, PartitionReport } from './reconcile.js';

// Burrow's HTTP JSON shapes (v3 API), so existing Burrow dashboards read Tally's reports.
// Tally's extra partition statuses (LOST, OUT_OF_RANGE) appear as partition statuses.

function offsetOf(observation: PartitionReport['start']) {
  if (observation === null) return null;
  return {
    offset: observation.committed ?? -1,
    timestamp: observation.observedAt,
    lag:
      observation.committed === null ? 0 : Math.max(0, observation.logEnd - observation.committed),
  };
}

function partitionOf(p: PartitionReport) {
  return {
    topic: p.topic,
    partition: p.partition,
    owner: p.owner ?? '',
    client_id: p.clientId ?? '',
    status: p.status,
    start: offsetOf(p.start),
    end: offsetOf(p.end),
    current_lag: p.currentLag ?? 0,
    complete: p.complete,
    time_lag_seconds: p.timeLagSeconds,
  };
}

/** The partition furthest behind (by offset lag), as Burrow's `maxlag` and Confluent's summary. */
export function maxLagPartition(report: GroupReport): PartitionReport | undefined {
  return [...report.partitions].sort((a, b) => (b.currentLag ?? 0) - (a.currentLag ?? 0))[0];
}

/** Burrow's `status` object; `all` false keeps only partitions that are not OK (as /status). */
export function burrowStatus(cluster: string, report: GroupReport, all: boolean) {
  const partitions = report.partitions.map(partitionOf);
  const worst = maxLagPartition(report);
  return {
    cluster,
    group: report.group,
    status: report.status,
    complete: report.complete,
    partitions: all ? partitions : partitions.filter((p) => p.status !== 'OK'),
    partition_count: report.partitionCount,
    maxlag: worst ? partitionOf(worst) : null,
    totallag: report.totalLag,
  };
}
