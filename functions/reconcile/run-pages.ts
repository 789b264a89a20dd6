// The pages of the answers of reconcile-now and restore (core/shared/pages.ts): what a cursor of
// each holds, and page sizes whose worst case (the longest names: group ids of 255 characters,
// topics of 249) stays under Lambda's 6 MB response (test/unit/reconcile/run-pages.test.ts).
import type { GroupReport } from '../core/reconcile/ports.js';
import type { ReconcileReport } from '../core/reconcile/reconciler.js';
import { planCsv, type RestorePlan, type RestoreTarget } from '../core/reconcile/restore-plan.js';
import { describeRun } from '../core/reconcile/run-text.js';
import { InvalidInputError, NotFoundError } from '../core/shared/errors.js';
import { isPlainObject } from '../core/shared/input-checks.js';
import { type PageRequest, pageOf } from '../core/shared/pages.js';
import type { PageLimits } from '../platform/http-pages.js';
import type { ExecutedRestore } from '../reconciling/restore-actions.js';

/** A group without its partitions is at most ~1 KB of JSON: 5,000 are ~5 MB. */
export const GROUP_PAGES: PageLimits = { defaultLimit: 1000, maxLimit: 5000 };
/** A partition of a restore is at most ~1 KB (plan row, CSV line and executed row). */
export const PARTITION_PAGES: PageLimits = { defaultLimit: 2000, maxLimit: 5000 };

const badCursor = () =>
  new InvalidInputError(
    'cursor: not a cursor of this route; pass the `next` of the page before unchanged',
    { field: 'cursor' },
  );

/** Each group of a run without its partitions (read from its consumer-group route). */
export function groupSummaries(groups: readonly GroupReport[]): object[] {
  return groups.map(({ partitions: _, ...group }) => group);
}

/** A reconcile-now cursor: the stored run and the position of the page's last group. */
export function runCursor(after: unknown): { run: string; at: number } {
  if (!isPlainObject(after) || typeof after.run !== 'string' || !Number.isSafeInteger(after.at))
    throw badCursor();
  return { run: after.run, at: after.at as number };
}

export function runPage(rows: readonly object[], run: string, request: PageRequest) {
  return pageOf(
    rows,
    request,
    (_, at) => ({ run, at }),
    (_, i, after: { at: number }) => i > after.at,
  );
}

/** A restore cursor: the page's last partition, and the execution when pages are of one. */
export interface RestoreCursor {
  readonly topic: string;
  readonly partition: number;
  readonly executedAt?: string;
}

export function restoreCursor(after: unknown): RestoreCursor {
  if (
    !isPlainObject(after) ||
    typeof after.topic !== 'string' ||
    !Number.isSafeInteger(after.partition) ||
    (after.executedAt !== undefined && typeof after.executedAt !== 'string')
  )
    throw badCursor();
  return after as unknown as RestoreCursor;
}

/** Partitions in a plan's order (restore-plan.ts): by topic, then partition. */
export function partitionPage<T extends Pick<RestoreTarget, 'topic' | 'partition'>>(
  partitions: readonly T[],
  request: PageRequest,
  executedAt?: string,
) {
  return pageOf(
    partitions,
    request,
    ({ topic, partition }) => ({ topic, partition, ...(executedAt && { executedAt }) }),
    (p, _, after: RestoreCursor) =>
      p.topic.localeCompare(after.topic) > 0 ||
      (p.topic === after.topic && p.partition > after.partition),
  );
}

/** Where a page's `next` points: the route's URL with the cursor, or null on the last page. */
type Link = (cursor: string | undefined) => string | null;

/** The groups of a run kept for its next pages (adapters/dynamodb/run-pages.ts). */
export interface RunPagesStore {
  save(rows: readonly object[]): Promise<string>;
  load(id: string): Promise<object[] | undefined>;
}

/** reconcile-now's answer: the run in words and its report, its first page of groups. */
export async function reconcileNowAnswer(
  report: ReconcileReport,
  request: PageRequest,
  store: Pick<RunPagesStore, 'save'>,
  link: Link,
) {
  const groups = groupSummaries(report.groups);
  const run = groups.length > request.limit ? await store.save(groups) : undefined;
  const page = run ? runPage(groups, run, request) : { items: groups, next: undefined };
  // In words first (what it found, what it repaired), then the report as it always was.
  return {
    ...describeRun(report),
    ...report,
    groups: page.items,
    groupCount: groups.length,
    ...(run && { runId: run }),
    next: link(page.next),
  };
}

/** A next page of a reconcile-now answer, read from the run's kept groups. */
export async function reconcileNextAnswer(
  request: PageRequest,
  store: Pick<RunPagesStore, 'load'>,
  link: Link,
) {
  const { run } = runCursor(request.after);
  const groups = await store.load(run);
  if (!groups)
    throw new NotFoundError(
      `cursor: the groups of run ${run} are no longer kept (a day); POST without cursor to run again`,
      { field: 'cursor' },
    );
  const page = runPage(groups, run, request);
  return { runId: run, groups: page.items, groupCount: groups.length, next: link(page.next) };
}

/** A restore's answer: `limit` of the plan's partitions (and CSV lines) from the cursor's. */
export function planAnswer(plan: RestorePlan, request: PageRequest, link: Link) {
  const page = partitionPage(plan.partitions, request);
  return {
    group: plan.group,
    partitions: page.items,
    csv: planCsv(page.items),
    partitionCount: plan.partitions.length,
    next: link(page.next),
  };
}

/** An execution's answer: `limit` of the record's partitions; `next` reads its record. */
export function executedAnswer(record: ExecutedRestore, request: PageRequest, link: Link) {
  const page = partitionPage(record.partitions, request, record.executedAt);
  return {
    executed: { ...record, partitions: page.items, partitionCount: record.partitions.length },
    next: link(page.next),
  };
}
