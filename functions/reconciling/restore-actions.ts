import { type Acknowledged, acknowledgeGroup, historyEntries } from '../core/reconcile/history.js';
import { planRestore, type RestorePlan } from '../core/reconcile/restore-plan.js';
import { ConflictError, GroupNotEmptyError, NotFoundError } from '../core/shared/errors.js';
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
  return planRestore(group, historyEntries(await rt.history.loadGroup(group)));
}

/** Kafka's states of a group it does not hold (never created, or deleted). */
const GONE = new Set(['Dead', 'Unknown']);

/**
 * Throws NotFoundError (404: no retry can help) for a group neither Kafka nor the offset history
 * knows. Asked only when an answer came out empty, so a known group costs nothing more.
 */
export async function requireKnownGroup(
  rt: Pick<ReconcileRuntime, 'history' | 'offsets'>,
  group: string,
): Promise<void> {
  if (!GONE.has(await rt.offsets.groupState(group))) return;
  if ((await rt.history.loadGroup(group)).items.length > 0) return;
  throw new NotFoundError(
    `group_id: no consumer group ${group} in Kafka and none in Tally's offset history; check the name (GET /v3/kafka/{cluster}/consumer lists the groups Tally knows)`,
    { field: 'group_id' },
  );
}

/**
 * Throws GroupNotEmptyError unless the group has no members. A group Kafka no longer holds
 * (Dead: deleted, as a LOST group is) has none, and committing its offsets creates it again.
 */
export async function requireEmpty(
  rt: Pick<ReconcileRuntime, 'offsets'>,
  group: string,
): Promise<void> {
  const state = await rt.offsets.groupState(group);
  if (state !== 'Empty' && !GONE.has(state)) {
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

/** Saves attempted before giving up on runs that keep saving the same items first. */
const ACKNOWLEDGE_ATTEMPTS = 3;

/**
 * Acknowledges the group's held findings (reconcile-history.ts acknowledgeGroup), saving each
 * item under the version it was read at; an item another run saved first is read again.
 */
export async function acknowledgeFindings(
  rt: Pick<ReconcileRuntime, 'history'>,
  group: string,
  at: number,
): Promise<Acknowledged[]> {
  const done: Acknowledged[] = [];
  for (let attempt = 0; attempt < ACKNOWLEDGE_ATTEMPTS; attempt++) {
    const { writes, acknowledged } = acknowledgeGroup(await rt.history.loadGroup(group), group, at);
    let conflicts = 0;
    for (const { item, partitions } of writes) {
      if (await rt.history.save(item, partitions)) {
        done.push(
          ...acknowledged.filter((a) => a.topic === item.topic && partitions.has(a.partition)),
        );
      } else {
        conflicts++;
      }
    }
    if (conflicts === 0) return done;
  }
  throw new ConflictError(
    `group_id: the offset history of ${group} kept changing under concurrent reconcile runs; try again`,
    { field: 'group_id' },
  );
}
