import { GroupNotEmptyError } from '../core/errors.js';
import { historyEntries } from '../core/reconcile-history.js';
import { planRestore, type RestorePlan } from '../core/restore.js';
import type { ReconcileRuntime } from './runtime.js';

// Planning and executing a return of a group to its last good offsets: the restore route and the
// offset-repair workflow's tasks do exactly this.

export interface ExecutedRestore {
  readonly group: string;
  readonly executedAt: string;
  readonly partitions: ReadonlyArray<{
    readonly topic: string;
    readonly partition: number;
    readonly before: number | null;
    readonly after: number;
  }>;
}

export async function restorePlan(
  rt: Pick<ReconcileRuntime, 'history'>,
  group: string,
): Promise<RestorePlan> {
  return planRestore(group, historyEntries(await rt.history.loadAll()));
}

/** Throws GroupNotEmptyError unless the group has no members. */
export async function requireEmpty(
  rt: Pick<ReconcileRuntime, 'offsets'>,
  group: string,
): Promise<void> {
  const state = await rt.offsets.groupState(group);
  if (state !== 'Empty') {
    throw new GroupNotEmptyError(
      `group_id: group ${group} is ${state}; offsets can be restored only while it is Empty (stop its consumers first)`,
      { field: 'group_id' },
    );
  }
}

/** Sets the plan's offsets (the group must be Empty) and records what was done. */
export async function executeRestore(
  rt: Pick<ReconcileRuntime, 'offsets' | 'restores'>,
  plan: RestorePlan,
): Promise<ExecutedRestore> {
  await requireEmpty(rt, plan.group);
  const at = Date.now();
  await rt.offsets.setOffsets(
    plan.group,
    plan.partitions.map((p) => ({ topic: p.topic, partition: p.partition, offset: p.target })),
  );
  const record: ExecutedRestore = {
    group: plan.group,
    executedAt: new Date(at).toISOString(),
    partitions: plan.partitions.map((p) => ({
      topic: p.topic,
      partition: p.partition,
      before: p.current,
      after: p.target,
    })),
  };
  // Chunked (restore-records.ts): one item holds 400 KB, ~6,000 partitions of this record.
  await rt.restores.save(record);
  return record;
}
