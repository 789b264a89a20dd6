import { MAX_SHARDS } from './group-shards.js';
import { PROBLEM_GROUPS_SHOWN, type ReconcileSummary, UNREADABLE_SHOWN } from './summary.js';

// The reconcile fan-out's summaries (infra/state-machines/reconcile-fan-out.asl.json): each child
// returns its shard's summary, held to its share of Step Functions' 256 KiB (the Map's output is
// every child's summary); one merge adds them up into the summary one sequential reconcile of the
// same groups returns (reconcile-summary.ts), plus when each shard observed the cluster.

/** What the Map's output (one summary per child) may take of the 256 KiB state limit. */
export const MAP_OUTPUT_BUDGET = 200 * 1024;

export interface ShardSummary extends ReconcileSummary {
  readonly shard: number;
  /** Problem groups dropped to fit the budget (beyond those PROBLEM_GROUPS_SHOWN drops). */
  readonly problemsTrimmed: number;
}

/** A child that failed after its retries, as the Map reports it. */
export interface FailedChild {
  readonly Error: string;
  readonly Cause: string;
}

export interface FanOutSummary extends ReconcileSummary {
  /** When each shard observed the cluster: a group's dated report is `report#<its shard's runAt>`. */
  readonly shards: ReadonlyArray<{ readonly shard: number; readonly runAt: string | null }>;
  readonly children: { readonly planned: number; readonly failed: number };
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** The byte share of one child's summary when `shards` children return one each. */
export const shardBudget = (shards: number) =>
  Math.floor(MAP_OUTPUT_BUDGET / Math.min(Math.max(shards, 1), MAX_SHARDS));

/**
 * The shard's summary within `maxBytes`: the lowest-ranked problem groups go first, then the
 * unreadable examples; what goes is still counted (problemsNotShown, unreadable.count).
 */
export function shardSummary(
  summary: ReconcileSummary,
  shard: number,
  maxBytes: number,
): ShardSummary {
  let problems = [...summary.problems];
  let first = [...summary.unreadable.first];
  const build = (): ShardSummary => ({
    ...summary,
    shard,
    unreadable: { count: summary.unreadable.count, first },
    problems,
    problemsNotShown: summary.problemsNotShown + summary.problems.length - problems.length,
    problemsTrimmed: summary.problems.length - problems.length,
  });
  let out = build();
  while (bytes(out) > maxBytes && (problems.length > 0 || first.length > 0)) {
    if (problems.length > 0) problems = problems.slice(0, -1);
    else first = first.slice(0, -1);
    out = build();
  }
  return out;
}

type Problem = ReconcileSummary['problems'][number];

const affected = (p: Problem) => Object.values(p.anomalies).reduce((a, b) => a + b, 0);

/** reconcile-summary.ts's order: errors first, then by partitions affected, then by id. */
const rank = (a: Problem, b: Problem) =>
  Number(b.status === 'ERR') - Number(a.status === 'ERR') ||
  affected(b) - affected(a) ||
  a.group.localeCompare(b.group);

const add = (into: Record<string, number>, from: Readonly<Record<string, number>>) => {
  for (const [k, n] of Object.entries(from)) into[k] = (into[k] ?? 0) + n;
};

export const isFailedChild = (result: ShardSummary | FailedChild): result is FailedChild =>
  'Error' in result;

/**
 * One summary from the children's, in shard order (a failed child names its shard in
 * `unreadable` and makes the run incomplete). The problem groups shown are the top of all
 * shards' as one run would rank them; a shard that had to trim its list shortens the merged one
 * to what is certainly in order, never showing a group ahead of one it ranks below.
 */
export function mergeShardSummaries(
  results: ReadonlyArray<ShardSummary | FailedChild>,
  table: string,
): FanOutSummary {
  const statuses = { OK: 0, WARN: 0, ERR: 0 };
  const anomalies: Record<string, number> = {};
  const mappings = { written: 0, changed: 0, removed: 0, keptNewer: 0 };
  const unreadable: string[] = [];
  const problems: Problem[] = [];
  const shards: Array<{ shard: number; runAt: string | null }> = [];
  let unreadableCount = 0;
  let problemCount = 0;
  let groups = 0;
  let partitions = 0;
  let adminCalls = 0;
  let historyConflicts = 0;
  let complete = true;
  let failed = 0;
  /** The lowest-ranked problem every shard showed all of its problems above. */
  let certainDownTo: Problem | undefined;
  let cutToNothing = false;
  results.forEach((result, index) => {
    if (isFailedChild(result)) {
      failed++;
      complete = false;
      unreadableCount++;
      unreadable.push(`shard ${index}: child failed (${result.Error}: ${result.Cause})`);
      shards.push({ shard: index, runAt: null });
      return;
    }
    shards.push({ shard: result.shard, runAt: result.runAt });
    complete &&= result.complete;
    groups += result.groups;
    partitions += result.partitions;
    adminCalls += result.adminCalls;
    historyConflicts += result.historyConflicts;
    add(statuses, result.statuses);
    add(anomalies, result.anomalies);
    add(mappings, result.mappings);
    unreadableCount += result.unreadable.count;
    unreadable.push(...result.unreadable.first);
    problems.push(...result.problems);
    problemCount += result.problems.length + result.problemsNotShown;
    if (result.problemsTrimmed > 0) {
      const last = result.problems[result.problems.length - 1];
      if (last === undefined) cutToNothing = true;
      else if (certainDownTo === undefined || rank(last, certainDownTo) < 0) certainDownTo = last;
    }
  });
  const ranked = problems.sort(rank);
  const certain = cutToNothing
    ? []
    : ranked.filter((p) => certainDownTo === undefined || rank(p, certainDownTo) <= 0);
  const shown = certain.slice(0, PROBLEM_GROUPS_SHOWN);
  const observed = shards.flatMap((s) => (s.runAt === null ? [] : [s.runAt])).sort();
  const runAt = observed[0] ?? new Date(0).toISOString();
  return {
    runAt,
    complete,
    adminCalls,
    historyConflicts,
    groups,
    partitions,
    statuses,
    anomalies,
    unreadable: { count: unreadableCount, first: unreadable.slice(0, UNREADABLE_SHOWN) },
    mappings,
    problems: shown,
    problemsNotShown: problemCount - shown.length,
    reports: {
      table,
      key: { group: '<group id>', sk: "report#<the runAt of the group's shard>" },
      latest: { group: '<group id>', sk: 'latest' },
    },
    shards,
    children: { planned: results.length, failed },
  };
}
