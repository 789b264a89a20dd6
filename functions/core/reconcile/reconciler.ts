import { dated, findingsDigest, summarize } from './group-report.js';
import { ALL_GROUPS, type GroupScope } from './group-shards.js';
import { openHistory } from './history.js';
import { type MappingRepairs, repairMappings } from './mappings.js';
import { judgeHeld } from './offsets/judge-held.js';
import { evaluatePartition, type OffsetObservation } from './offsets/offset-status.js';
import type {
  GroupReport,
  GroupReportWrite,
  GroupSnapshot,
  GroupSource,
  MappingStore,
  OffsetHistory,
  PartitionReport,
  ReportedGroup,
  ReportStore,
  StoredHistory,
} from './ports.js';
import { type Pruned, pruneReports, type RetentionOptions } from './prune-reports.js';
import { sameTopics, topicsRead } from './topic-index.js';

export interface ReconcileOptions extends RetentionOptions {
  /** Observations kept per partition (Burrow's intervals). */
  readonly windowSize: number;
  /** A lag at or below it counts as zero (Burrow's `allowed-lag`); default 0. */
  readonly allowedLag?: number;
  /** Windows less complete than this are not judged by Burrow's rules (Burrow's `minimum-complete`). */
  readonly minimumComplete?: number;
  /** How long a gone member's mappings are kept. */
  readonly graceMs: number;
}

export interface ReconcileReport {
  readonly runAt: string;
  /** False when something could not be read; `unreadable` says what. */
  readonly complete: boolean;
  readonly unreadable: readonly string[];
  readonly adminCalls: number;
  readonly groups: readonly GroupReport[];
  readonly mappings: MappingRepairs;
  /** History items another overlapping run saved first (this run's changes to them are dropped). */
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

/** The stored history of the groups `scope` owns: a scoped run sweeps and prunes only those. */
function scopedHistory(stored: StoredHistory, scope: GroupScope): StoredHistory {
  if (scope === ALL_GROUPS) return stored;
  return {
    items: stored.items.filter((item) => scope.owns(item.group)),
    legacy: stored.legacy.filter((entry) => scope.owns(entry.group)),
  };
}

export function createReconciler(ports: ReconcilePorts, options: ReconcileOptions) {
  const settings = {
    size: options.windowSize,
    allowedLag: options.allowedLag ?? 0,
    minimumComplete: options.minimumComplete ?? 0,
  };
  /**
   * One run over the groups `scope` owns (all of them by default; one shard of the fan-out:
   * group-shards.ts). Nothing outside the scope is read into the run or written by it.
   */
  async function run(scope: GroupScope = ALL_GROUPS): Promise<ReconcileReport> {
    const history = openHistory(
      scopedHistory(await ports.history.loadAll(scope.range), scope),
      options.windowSize,
      options.retentionMs,
    );
    const snapshot = await ports.source.read(history.known(), scope);
    const mappings = await repairMappings(ports.mappings, snapshot, options.graceMs, scope);
    const at = snapshot.observedAt;
    const groups = snapshot.groups.map((group) => judgeGroup(group, at, history));
    const index = await ports.reports.reportedGroups(scope.range);
    const saved = ports.reports.saveGroupReports(
      at,
      groups.map((report) => withDated(report, index.get(report.group), at)),
    );
    history.sweep(at, at - options.retentionMs, options.pruneBudget);
    const [flushed] = await Promise.all([history.flush(ports.history), saved]);
    const reportsPruned = await pruneReports(
      ports.reports,
      groups.map((g) => g.group),
      at,
      options,
      scope,
    );
    return {
      runAt: new Date(at).toISOString(),
      complete: snapshot.unreadable.length === 0,
      unreadable: snapshot.unreadable,
      adminCalls: snapshot.adminCalls,
      groups,
      mappings,
      historyConflicts: flushed.conflicts,
      pruned: { ...reportsPruned, history: flushed.removed },
    };
  }

  /**
   * The group's latest report is stored every run (its lags and times move); its dated report
   * only when its findings changed (a REWIND or LOST is stored once, not once per run it lasts),
   * and at least every half retention, so the dated history always holds the group's state.
   * Its index entry (with the topics it reads) is written with a dated report, or alone when its
   * topics changed.
   */
  function withDated(
    report: GroupReport,
    marked: ReportedGroup | undefined,
    at: number,
  ): GroupReportWrite {
    const body = dated(report);
    const digest = findingsDigest(body);
    const due =
      marked === undefined ||
      marked.digest !== digest ||
      at - marked.markedAt >= options.retentionMs / 2;
    // The topic index moves only when the group's topics changed, or its entry has none (an
    // entry written before that index): the upgrade's first run writes every group's.
    const now = topicsRead(report);
    const moved = marked?.topics === undefined || !sameTopics(marked.topics, now);
    return {
      group: report.group,
      report,
      ...(due && { dated: { body, digest } }),
      ...((due || moved) && {
        topics: { now, was: marked?.topics ?? [], ...(marked && { marked }) },
      }),
    };
  }

  /** Steps every partition of a group in the history and judges its window. */
  function judgeGroup(
    group: GroupSnapshot,
    observedAt: number,
    history: ReturnType<typeof openHistory>,
  ): GroupReport {
    const owners = new Map<string, { memberId: string; clientId: string }>();
    for (const member of group.members) {
      for (const [topic, partitions] of Object.entries(member.assignment)) {
        for (const p of partitions) owners.set(`${topic}#${p}`, member);
      }
    }
    const partitions: PartitionReport[] = [];
    for (const offsets of group.partitions) {
      const owner = owners.get(`${offsets.topic}#${offsets.partition}`);
      // Kafka does not say when an offset was committed: a commit is dated by the first run
      // that sees it (offset-status.ts), and a live owner tells a stalled consumer from one
      // that stopped.
      const observation: OffsetObservation = {
        observedAt,
        committed: offsets.committed,
        logStart: offsets.logStart,
        logEnd: offsets.logEnd,
      };
      const { window, stored } = history.observe(
        group.groupId,
        offsets.topic,
        offsets.partition,
        observation,
        owner !== undefined,
      );
      const judged = judgeHeld(
        evaluatePartition(window, observedAt, settings, { owned: owner !== undefined }),
        window,
        stored ?? {},
        observedAt,
      );
      history.hold(group.groupId, offsets.topic, offsets.partition, judged);
      const evaluation = judged.evaluation;
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
    return summarize(group, partitions);
  }
  return { run };
}
