import { ALL_GROUPS, type GroupScope } from './group-shards.js';
import type { ReportedGroup, ReportStore } from './ports.js';

// What keeps reconcile's stored state bounded by configuration, not by the number of runs: each
// run deletes what it no longer needs, item by item (no TTL: DynamoDB's may lag for days, and
// the local stack never expires anything). Nothing here scans history: dated reports are
// pruned by key range per group, gone groups are found in a small index.
//
// Bounds, with R the retention and C the schedule's cadence:
// - dated reports: per reported group at most R / C (+ the few a run may leave for the next);
//   usually far fewer, since a run stores one only when the group's findings changed or its
//   index mark is half a retention old (reconcile.ts);
// - a group no longer reported keeps its latest report, index entry and dated reports until
//   R to 1.5 R after its last report: its index mark, refreshed every R / 2, is forgotten once
//   older than 1.5 R, when it has had no report for at least R (all its dated ones are past R);
// - offset history (reconcile-history.ts): a partition is kept while observed with a commit or
//   an owner, and while unobserved for less than R (a deleted topic, an unreadable group); it
//   lives in one item per group, topic and chunk of partitions (offset-changes.ts), so items
//   are at most the partitions kept, and usually one per group and topic.

export interface RetentionOptions {
  /** How long dated reports, reports of gone groups and unobserved history are kept. */
  readonly retentionMs: number;
  /** Deletes a run may spend on backlog: gone groups' reports and unobserved history. */
  readonly pruneBudget: number;
}

/** What a run deleted to stay within its bounds. */
export interface Pruned {
  readonly reports: number;
  readonly groups: number;
  readonly history: number;
}

/**
 * Dated reports a live group's run deletes at most: one run's worth plus catch-up after runs
 * that were missed, so a group's backlog shrinks even if it ever grew.
 */
const LIVE_PRUNE_LIMIT = 10;

/** Live groups pruned at once. */
const PARALLEL = 16;

/**
 * Entries marked before the `byShard` index (seen only by an unscoped run, which reads the whole
 * index) are written again as they are, now with their shard, so fan-out children see them:
 * once per entry, a few at a time. `done` holds those this run already wrote or forgot; another
 * scope's entries are left to it.
 */
async function reindex(
  reports: ReportStore,
  index: ReadonlyMap<string, ReportedGroup>,
  done: ReadonlySet<string>,
  scope: GroupScope,
): Promise<void> {
  const stale = [...index].filter(
    ([group, entry]) => entry.unindexed && !done.has(group) && scope.owns(group),
  );
  for (let i = 0; i < stale.length; i += PARALLEL) {
    await Promise.all(
      stale
        .slice(i, i + PARALLEL)
        .map(([group, { markedAt, digest, topics }]) =>
          reports.markReported(group, markedAt, digest, topics),
        ),
    );
  }
}

/** Keeps the report index fresh for `reported` groups and prunes dated and gone reports. */
export async function pruneReports(
  reports: ReportStore,
  reported: readonly string[],
  at: number,
  options: RetentionOptions,
  scope: GroupScope = ALL_GROUPS,
): Promise<Omit<Pruned, 'history'>> {
  const { retentionMs } = options;
  // A shard's entries only (the byShard index), for a child of the fan-out.
  const index = await reports.reportedGroups(scope.range);
  const before = at - retentionMs;
  let deleted = 0;
  const rewritten = new Set<string>();
  // A query and a delete or two per group, independent of each other's: asked a few groups at
  // a time, 2,000 groups cost a run ~2,000 / PARALLEL round trips, not 2,000.
  for (let i = 0; i < reported.length; i += PARALLEL) {
    const counts = await Promise.all(
      reported.slice(i, i + PARALLEL).map(async (group) => {
        const entry = index.get(group);
        if (entry === undefined || at - entry.markedAt >= retentionMs / 2) {
          await reports.markReported(group, at, entry?.digest, entry?.topics);
          rewritten.add(group);
        }
        return reports.pruneGroupReports(group, before, LIVE_PRUNE_LIMIT);
      }),
    );
    deleted += counts.reduce((sum, n) => sum + n, 0);
  }
  const live = new Set(reported);
  let budget = options.pruneBudget;
  let groups = 0;
  for (const [group, { markedAt: marked }] of index) {
    // A gone group outside the scope is another shard's to forget.
    if (live.has(group) || !scope.owns(group) || at - marked <= 1.5 * retentionMs) continue;
    if (budget <= 0) break;
    const n = await reports.pruneGroupReports(group, before, budget);
    deleted += n;
    budget -= n;
    if (budget <= 0) break; // there may be more: the index entry stays for the next run
    await reports.forgetGroup(group, marked, before);
    rewritten.add(group);
    groups++;
  }
  await reindex(reports, index, rewritten, scope);
  return { reports: deleted, groups };
}
