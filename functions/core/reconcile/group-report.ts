import { createHash } from 'node:crypto';
import { groupStatus } from './offsets/offset-status.js';
import type { GroupReport, GroupSnapshot, PartitionReport } from './ports.js';

// A group's report from its judged partitions, and the smaller copy kept in its dated history.

const ANOMALIES = new Set(['REWIND', 'LOST', 'OUT_OF_RANGE', 'STOP', 'STALL', 'WARN']);

/** Rolls a group's partitions up as Burrow does, with lags and anomaly counts. */
export function summarize(group: GroupSnapshot, judged: readonly PartitionReport[]): GroupReport {
  const partitions = [...judged].sort(
    (a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition,
  );
  const rollUp = groupStatus(partitions);
  const anomalies: Record<string, number> = {};
  for (const p of partitions) {
    if (ANOMALIES.has(p.status)) anomalies[p.status] = (anomalies[p.status] ?? 0) + 1;
  }
  const lags = partitions.map((p) => p.currentLag ?? 0);
  return {
    group: group.groupId,
    state: group.state,
    status: rollUp.status,
    complete: rollUp.complete,
    partitionCount: partitions.length,
    // Reduced, not spread: a spread of ~120,000 arguments overflows the call stack.
    maxLag: lags.reduce((a, b) => Math.max(a, b), 0),
    totalLag: lags.reduce((a, b) => a + b, 0),
    maxTimeLagSeconds: partitions.reduce((a, p) => Math.max(a, p.timeLagSeconds ?? 0), 0),
    anomalies,
    partitions,
  };
}

/**
 * A report as kept in a group's dated history: its summary and only the partitions with a
 * finding. Readers of the history (the audit's REWIND/LOST events) need nothing else, and a
 * dated copy of every OK partition of every group on every run is most of what a run writes.
 */
export function dated(report: GroupReport): GroupReport {
  return { ...report, partitions: report.partitions.filter((p) => p.status !== 'OK') };
}

/**
 * What a dated report says that matters to its readers: the group's state and status, and each
 * finding (status, commit, rewind, loss, range), not lags or times, which move every run. Two
 * runs with the same digest would store the same findings twice.
 */
export function findingsDigest(dated: GroupReport): string {
  const findings = dated.partitions.map((p) => [
    p.topic,
    p.partition,
    p.status,
    p.committed,
    p.rewind ?? null,
    p.lost ?? null,
    p.outOfRange ?? null,
  ]);
  const summary = [dated.state, dated.status, dated.complete, dated.partitionCount, findings];
  return createHash('sha256').update(JSON.stringify(summary)).digest('base64url');
}
