// The offset-repair workflow's tasks (Step Functions): plan a return of a group to its last good
// offsets, wait for the group to be Empty (GroupNotEmptyError is retried with backoff), and
// execute exactly the plan a person approved.
import { InvalidInputError } from '../core/errors.js';
import { isPlainObject } from '../core/record-input.js';
import type { RestorePlan } from '../core/restore.js';
import { taskHandler } from '../platform/task.js';
import { executeRestore, requireEmpty, restorePlan } from '../reconcile/restore-actions.js';
import { reconcileRuntime } from '../reconcile/runtime.js';

const GROUP = /^[\x21-\x7e]{1,255}$/;

function groupOf(input: unknown): string {
  const group = isPlainObject(input) ? input.group : undefined;
  if (typeof group !== 'string' || !GROUP.test(group)) {
    throw new InvalidInputError('group: the consumer group id to repair', { field: 'group' });
  }
  return group;
}

function planOf(input: unknown): RestorePlan {
  const plan = isPlainObject(input) ? input.plan : undefined;
  const valid =
    isPlainObject(plan) &&
    typeof plan.group === 'string' &&
    Array.isArray(plan.partitions) &&
    plan.partitions.every(
      (p: unknown) =>
        isPlainObject(p) &&
        typeof p.topic === 'string' &&
        Number.isSafeInteger(p.partition) &&
        Number.isSafeInteger(p.target) &&
        (p.target as number) >= 0,
    );
  if (!valid) {
    throw new InvalidInputError(
      'plan: a restore plan {group, partitions: [{topic, partition, target}]}',
      {
        field: 'plan',
      },
    );
  }
  return plan as unknown as RestorePlan;
}

/** `{group}` → `{needed, plan, topics}`: what a restore would change, and on which topics. */
export const planRepair = taskHandler(async (input: unknown) => {
  const group = groupOf(input);
  const plan = await restorePlan(await reconcileRuntime(), group);
  const topics = [...new Set(plan.partitions.map((p) => p.topic))].sort();
  return { needed: plan.partitions.length > 0, plan, topics };
});

/** `{group}` → `{group, state: "Empty"}`, or GroupNotEmptyError while it has members. */
export const checkGroupEmpty = taskHandler(async (input: unknown) => {
  const group = groupOf(input);
  await requireEmpty(await reconcileRuntime(), group);
  return { group, state: 'Empty' };
});

/** `{plan}` → what was set: the approved plan, as approved (the group must be Empty). */
export const executeRepair = taskHandler(async (input: unknown) => {
  return executeRestore(await reconcileRuntime(), planOf(input));
});
