import type { GroupScope, ShardRange } from './group-shards.js';
import type { OffsetObservation, PartitionEvaluation } from './offsets/offset-status.js';
import type { PartitionHistory } from './offsets/partition-history.js';

// What the reconcile core needs from the outside world; adapters implement these.

/** One member of a consumer group, as the group coordinator describes it. */
export interface GroupMember {
  readonly memberId: string;
  readonly clientId: string;
  readonly clientHost: string;
  /** topic → partitions assigned to this member. */
  readonly assignment: Readonly<Record<string, readonly number[]>>;
}

export interface PartitionOffsets {
  readonly topic: string;
  readonly partition: number;
  /** null when the group has no commit for it (Kafka's -1). */
  readonly committed: number | null;
  readonly logStart: number;
  readonly logEnd: number;
}

export interface GroupSnapshot {
  readonly groupId: string;
  /** Kafka's group state (Stable, Empty, PreparingRebalance, Dead…); Dead when gone, as Kafka says. */
  readonly state: string;
  readonly members: readonly GroupMember[];
  readonly partitions: readonly PartitionOffsets[];
}

export interface ClusterSnapshot {
  readonly observedAt: number;
  readonly groups: readonly GroupSnapshot[];
  /** What could not be read (a group whose describe failed…): the report is then partial. */
  readonly unreadable: readonly string[];
  readonly adminCalls: number;
}

export interface GroupSource {
  /**
   * Every live group, plus the groups and partitions known from history (`group → topic#partition`),
   * which are reported without a commit when Kafka no longer has one. With a `scope`, only the
   * groups it owns are described and fetched (one shard of the fan-out).
   */
  read(
    also: ReadonlyMap<string, ReadonlySet<string>>,
    scope?: GroupScope,
  ): Promise<ClusterSnapshot>;
}

/** A stored mapping and the observation time it was written from (its version). */
export interface StoredMapping {
  readonly pk: string;
  readonly sk: string;
  readonly attributes: Readonly<Record<string, string | number>>;
  readonly lastSeenAt: number;
  /** Stored before the `byShard` index: rewritten by the next unscoped run so children see it. */
  readonly unindexed?: boolean;
}

export interface MappingStore {
  /** Every mapping; with a `range`, those of its groups only (read from the `byShard` index). */
  list(range?: ShardRange): Promise<StoredMapping[]>;
  /** Writes unless the stored item was seen later; returns false when a newer one won. */
  upsert(mapping: StoredMapping): Promise<boolean>;
  /**
   * Deletes only if the item is still the one the decision was based on (lastSeenAt unchanged):
   * a late delete can never remove a mapping written after it. Returns false when it kept it.
   */
  deleteIfUnchanged(mapping: StoredMapping): Promise<boolean>;
}

/** A group/partition's window as stored before offset history was kept per item (legacy). */
export interface HistoryEntry {
  readonly group: string;
  readonly key: string; // topic#partition
  readonly window: readonly OffsetObservation[];
  readonly version: number;
}

/**
 * One stored item of a group's offset history: the partitions of one topic in one chunk
 * (offset-changes.ts), versioned so two overlapping runs cannot interleave a window.
 */
export interface HistoryItem {
  readonly group: string;
  /** `topic#w<chunk>`; whatever it is, a partition stays in the item it was stored in. */
  readonly id: string;
  readonly topic: string;
  readonly partitions: ReadonlyMap<number, PartitionHistory>;
  /** 0 when not stored yet. */
  readonly version: number;
  /** Stored before the `byShard` index: rewritten by the next unscoped run so children see it. */
  readonly unindexed?: boolean;
}

export interface StoredHistory {
  readonly items: readonly HistoryItem[];
  /** Items of the old per-partition shape, read so an upgrade keeps its windows. */
  readonly legacy: readonly HistoryEntry[];
}

export interface OffsetHistory {
  /** Every group's history; with a `range`, its groups' only (read from the `byShard` index). */
  loadAll(range?: ShardRange): Promise<StoredHistory>;
  /** One group's history only: reads grow with that group's items, not the table's. */
  loadGroup(group: string): Promise<StoredHistory>;
  /** Saves unless another run saved since `item.version` was read; false when it lost. */
  save(item: HistoryItem, partitions: ReadonlyMap<number, PartitionHistory>): Promise<boolean>;
  /** Deletes unless another run saved since `item.version` was read; false when it kept it. */
  remove(item: HistoryItem): Promise<boolean>;
  /** Deletes a legacy item unless it changed since read (its windows now live in an item). */
  removeLegacy(entry: HistoryEntry): Promise<boolean>;
}

export interface GroupReportWrite {
  readonly group: string;
  readonly report: object;
  readonly dated?: { readonly body: object; readonly digest: string };
  /**
   * The topics the report reads (`now`) and those the group's index entry recorded (`was`; empty
   * when none), given when the entry is written (with `dated`) or must be (its topics changed, or
   * it has none yet): the entry records `now` (keeping `marked`'s mark and digest when not
   * `dated`), and, where `was` and `now` differ, the topic index moves from `was` to `now`
   * (topic-index.ts).
   */
  readonly topics?: {
    readonly now: readonly string[];
    readonly was: readonly string[];
    readonly marked?: ReportedGroup;
  };
}

/** A group's entry in the index of reported groups. */
export interface ReportedGroup {
  /** When it was last marked reported. */
  readonly markedAt: number;
  /** The findings digest of its newest dated report (group-report.ts), when marked with one. */
  readonly digest?: string;
  /** Marked before the `byShard` index: rewritten by the next unscoped run so children see it. */
  readonly unindexed?: boolean;
  /**
   * The topics its latest report read when the entry was written (sorted); undefined for an
   * entry written before the topic index, which the next run writes with them.
   */
  readonly topics?: readonly string[];
}

export interface ReportStore {
  /** Stores `report` as the group's latest, and `dated` in its history under `at`. */
  saveGroupReport(group: string, at: number, report: object, dated: object): Promise<void>;
  /**
   * Stores many groups' latest reports at once, in as few requests as the store allows; where
   * `dated` is given, also the dated report and the group's index mark (at `at`, with `digest`).
   */
  saveGroupReports(at: number, reports: ReadonlyArray<GroupReportWrite>): Promise<void>;
  latestGroupReport(group: string): Promise<object | undefined>;
  /** The group's stored dated reports since `since` (epoch ms), oldest first. */
  groupReportsSince(group: string, since: number): Promise<object[]>;
  /**
   * Deletes up to `limit` of the group's dated reports dated before `before`, oldest first,
   * reading no more than that many keys; returns how many it deleted.
   */
  pruneGroupReports(group: string, before: number, limit: number): Promise<number>;
  /**
   * The index of groups with stored reports; with a `range`, its groups' entries only (read from
   * the `byShard` index, so a fan-out child's read grows with its own groups).
   */
  reportedGroups(range?: ShardRange): Promise<ReadonlyMap<string, ReportedGroup>>;
  /**
   * Ids of reported groups after `after` (a group id; undefined: from the first) in the index's
   * order, at most `limit`: one page of the index read, however many groups it holds.
   */
  reportedGroupsAfter(after: string | undefined, limit: number): Promise<string[]>;
  /** The topics some reported group reads (the topic index's list), in its order. */
  reportedTopics(): Promise<string[]>;
  /** The reported groups whose latest report reads `topic` (the topic index), in its order. */
  topicGroups(topic: string): Promise<string[]>;
  /** Marks the group reported at `at`, keeping `digest` and the entry's `topics` when given. */
  markReported(
    group: string,
    at: number,
    digest?: string,
    topics?: readonly string[],
  ): Promise<void>;
  /**
   * Deletes a gone group's latest report unless it is dated `before` or later, and its index
   * entry unless marked again since `markedAt`: a group that came back meanwhile keeps both.
   * A forgotten group leaves the topic index too.
   */
  forgetGroup(group: string, markedAt: number, before: number): Promise<void>;
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
  /** Burrow's: the share of partitions whose window is full. */
  readonly complete: number;
  readonly partitionCount: number;
  readonly maxLag: number;
  readonly totalLag: number;
  readonly maxTimeLagSeconds: number;
  readonly anomalies: Readonly<Record<string, number>>;
  readonly partitions: readonly PartitionReport[];
}
