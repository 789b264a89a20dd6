import { dated, summarize } from './group-report.js';
import { type MappingRepairs, repairMappings } from './mappings.js';
import {
  appendObservation,
  evaluatePartition,
  type OffsetObservation,
  type PartitionEvaluation,
} from './offset-status.js';
import type {
  GroupSource,
  HistoryEntry,
  MappingStore,
  OffsetHistory,
  ReportStore,
} from './reconcile-ports.js';
import {
  keepOrRetire,
  type Pruned,
  pruneReports,
  pruneUnobserved,
  type RetentionOptions,
} from './reconcile-retention.js';

export interface ReconcileOptions extends RetentionOptions {
  /** Observations kept per partition (Burrow's intervals). */
  readonly windowSize: number;
  /** How long a gone member's mappings are kept. */
  readonly graceMs: number;
}

export interface PartitionReport extends PartitionEvaluation {
  readonly topic: string;
  readonly partition: number;
  readonly owner: string | null;
  readonly clientId: string | null;
  readonly committed: number | null;
  readonly logStart: number;
  readonly logEnd: number;
  /** Oldest and newest observation in the window. */
  readonly start: OffsetObservation | null;
  readonly end: OffsetObservation | null;
}

export interface GroupReport {
  readonly group: string;
  readonly state: string;
  readonly status: 'OK' | 'WARN' | 'ERR';
  readonly complete: boolean;
  readonly partitionCount: number;
  readonly maxLag: number;
  readonly totalLag: number;
  readonly maxTimeLagSeconds: number;
  readonly anomalies: Readonly<Record<string, number>>;
  readonly partitions: readonly PartitionReport[];
}

export interface ReconcileReport {
  readonly runAt: string;
  /** False when something could not be read; `unreadable` says what. */
  readonly complete: boolean;
  readonly unreadable: readonly string[];
  readonly adminCalls: number;
  readonly groups: readonly GroupReport[];
  readonly mappings: MappingRepairs;
  /** History windows another overlapping run saved first (this run's observation is dropped). */
  readonly historyConflicts: number;
  /** What this run deleted to stay within its retention (reconcile-retention.ts); optional so
   * reports built by hand (tests, other callers) need not invent it. */
  readonly pruned?: Pruned;
}

export interface ReconcilePorts {
  readonly source: GroupSource;
  readonly mappings: MappingStore;
  readonly history: OffsetHistory;
  readonly reports: ReportStore;
}

export function createReconciler(ports: ReconcilePorts, options: ReconcileOptions) {
  async function run(): Promise<ReconcileReport> {
    const history = await ports.history.loadAll();
    const byKey = new Map<string, HistoryEntry>(
      history.map((e) => [`${e.group}\u0000${e.key}`, e]),
    );
    const also = new Map<string, Set<string>>();
    for (const entry of history) {
      also.set(entry.group, (also.get(entry.group) ?? new Set()).add(entry.key));
    }
    const snapshot = await ports.source.read(also);
    const mappings = await repairMappings(ports.mappings, snapshot, options.graceMs);
    let historyConflicts = 0;
    let historyRemoved = 0;
    const unobserved = new Set(history);
    const groups: GroupReport[] = [];
    for (const group of snapshot.groups) {
      const owners = new Map<string, { memberId: string; clientId: string }>();
      for (const member of group.members) {
        for (const [topic, partitions] of Object.entries(member.assignment)) {
          for (const p of partitions) owners.set(`${topic}#${p}`, member);
        }
      }
      const partitions: PartitionReport[] = [];
      for (const offsets of group.partitions) {
        const key = `${offsets.topic}#${offsets.partition}`;
        const entry = byKey.get(`${group.groupId}\u0000${key}`) ?? {
          group: group.groupId,
          key,
          window: [],
          version: 0,
        };
        const owner = owners.get(key);
        // Kafka does not say when an offset was committed. A partition with a live owner is taken
        // as committing now (consumers commit on an interval even without progress), so an
        // unchanged offset reads as STALL; without an owner nothing commits, which reads as STOP.
        const observation: OffsetObservation = {
          observedAt: snapshot.observedAt,
          committed: offsets.committed,
          logStart: offsets.logStart,
          logEnd: offsets.logEnd,
          ...(owner && offsets.committed !== null && { committedAt: snapshot.observedAt }),
        };
        const window = appendObservation(entry.window, observation, options.windowSize);
        unobserved.delete(entry);
        const kept = await keepOrRetire(ports.history, entry, window, owner !== undefined);
        if (kept === 'conflict') historyConflicts++;
        if (kept === 'removed') historyRemoved++;
        const evaluation = evaluatePartition(window, snapshot.observedAt, options.windowSize);
        partitions.push({
          ...evaluation,
          topic: offsets.topic,
          partition: offsets.partition,
          owner: owner?.memberId ?? null,
          clientId: owner?.clientId ?? null,
          committed: offsets.committed,
          logStart: offsets.logStart,
          logEnd: offsets.logEnd,
          start: window[0] ?? null,
          end: window[window.length - 1] ?? null,
        });
      }
      const report = summarize(group, partitions);
      await ports.reports.saveGroupReport(
        group.groupId,
        snapshot.observedAt,
        report,
        dated(report),
      );
      groups.push(report);
    }
    const at = snapshot.observedAt;
    const reportsPruned = await pruneReports(
      ports.reports,
      groups.map((g) => g.group),
      at,
      options,
    );
    historyRemoved += await pruneUnobserved(
      ports.history,
      [...unobserved],
      at - options.retentionMs,
      options.pruneBudget,
    );
    return {
      runAt: new Date(snapshot.observedAt).toISOString(),
      complete: snapshot.unreadable.length === 0,
      unreadable: snapshot.unreadable,
      adminCalls: snapshot.adminCalls,
      groups,
      mappings,
      historyConflicts,
      pruned: { ...reportsPruned, history: historyRemoved },
    };
  }
  return { run };
}
