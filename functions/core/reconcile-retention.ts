import type { OffsetObservation } from './offset-status.js';
import type { HistoryEntry, OffsetHistory, ReportStore } from './reconcile-ports.js';

// What keeps reconcile's stored state bounded by configuration, not by the number of runs: each
// run deletes what it no longer needs, item by item (no TTL: DynamoDB's may lag for days, and
// the local stack never expires anything). Nothing here scans history: dated reports are
// pruned by key range per group, gone groups are found in a small index.
//
// Bounds, with R the retention and C the schedule's cadence:
// - dated reports: per reported group at most R / C (+ the few a run may leave for the next);
// - a group no longer reported keeps its latest report, index entry and dated reports until
//   R to 1.5 R after its last report: its index mark, refreshed every R / 2, is forgotten once
//   older than 1.5 R, when it has had no report for at least R (all its dated ones are past R);
// - offset history: one item per partition observed with a commit or an owner, and per
//   partition left unobserved for less than R (a deleted topic, an unreadable group).

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
 * Saves a partition's new window while it is worth keeping: it holds a commit (something to
 * judge, a last good offset to restore) or a member owns the partition (it will commit soon).
 * Else the stored entry is deleted: a window of only `null` commits has been reported LOST for
 * the window's length already, and judges as an empty one would.
 */
export async function keepOrRetire(
  history: OffsetHistory,
  entry: HistoryEntry,
  window: readonly OffsetObservation[],
  owned: boolean,
): Promise<'saved' | 'removed' | 'skipped' | 'conflict'> {
  if (owned || window.some((o) => o.committed !== null)) {
    return (await history.save(entry, window)) ? 'saved' : 'conflict';
  }
  if (entry.version === 0) return 'skipped'; // never stored: nothing to delete
  return (await history.remove(entry)) ? 'removed' : 'conflict';
}

/** Deletes unobserved history entries last observed before `before`, within `budget`. */
export async function pruneUnobserved(
  history: OffsetHistory,
  unobserved: readonly HistoryEntry[],
  before: number,
  budget: number,
): Promise<number> {
  let removed = 0;
  for (const entry of unobserved) {
    if (removed >= budget) break;
    const last = entry.window[entry.window.length - 1]?.observedAt ?? Number.NEGATIVE_INFINITY;
    if (last < before && (await history.remove(entry))) removed++;
  }
  return removed;
}

/** Keeps the report index fresh for `reported` groups and prunes dated and gone reports. */
export async function pruneReports(
  reports: ReportStore,
  reported: readonly string[],
  at: number,
  options: RetentionOptions,
): Promise<Omit<Pruned, 'history'>> {
  const { retentionMs } = options;
  const index = await reports.reportedGroups();
  const before = at - retentionMs;
  let deleted = 0;
  // A query and a delete or two per group, independent of each other's: asked a few groups at
  // a time, 2,000 groups cost a run ~2,000 / PARALLEL round trips, not 2,000.
  for (let i = 0; i < reported.length; i += PARALLEL) {
    const counts = await Promise.all(
      reported.slice(i, i + PARALLEL).map(async (group) => {
        const marked = index.get(group);
        if (marked === undefined || at - marked >= retentionMs / 2) {
          await reports.markReported(group, at);
        }
        return reports.pruneGroupReports(group, before, LIVE_PRUNE_LIMIT);
      }),
    );
    deleted += counts.reduce((sum, n) => sum + n, 0);
  }
  const live = new Set(reported);
  let budget = options.pruneBudget;
  let groups = 0;
  for (const [group, marked] of index) {
    if (live.has(group) || at - marked <= 1.5 * retentionMs) continue;
    if (budget <= 0) break;
    const n = await reports.pruneGroupReports(group, before, budget);
    deleted += n;
    budget -= n;
    if (budget <= 0) break; // there may be more: the index entry stays for the next run
    await reports.forgetGroup(group, marked, before);
    groups++;
  }
  return { reports: deleted, groups };
}
