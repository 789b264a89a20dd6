// The offset-repair workflow's tasks (Step Functions): plan a return of a group to its last good
// offsets, wait for the group to be Empty (GroupNotEmptyError is retried with backoff), and
// execute exactly the plan a person approved (repair-plan.ts).
import { taskHandler } from '../platform/task.js';
import { requireEmpty } from '../reconciling/restore-actions.js';
import { reconcileRuntime } from '../reconciling/runtime.js';
import { executeRepairTask, groupOf, planRepairTask } from './repair-plan.js';

export const planRepair = taskHandler(async (input: unknown) =>
  planRepairTask(await reconcileRuntime(), input),
);

/** `{group}` → `{group, state: "Empty"}`, or GroupNotEmptyError while it has members. */
export const checkGroupEmpty = taskHandler(async (input: unknown) => {
  const group = groupOf(input);
  await requireEmpty(await reconcileRuntime(), group);
  return { group, state: 'Empty' };
});

export const executeRepair = taskHandler(async (input: unknown) =>
  executeRepairTask(await reconcileRuntime(), input),
);
