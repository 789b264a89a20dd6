// The fan-out audit's first task: the topic's partitions in groups, one child each.
import { type PartitionGroup, partitionGroups } from '../core/audit/merge-slices.js';
import { InvalidInputError } from '../core/shared/errors.js';
import { taskHandler } from '../platform/task.js';
import { parsePlanInput } from './fan-out-input.js';
import { fanOutRuntime } from './fan-out-runtime.js';

/** Default group size: at most 1,000 children (the Map's output and history stay small). */
export const perChild = (partitions: number, asked: number | undefined) =>
  asked ?? Math.max(8, Math.ceil(partitions / 1000));

/**
 * This task's output lists every child (~45 bytes each) and the Map's output has one summary per
 * child (~90 bytes): 2,000 children keep both far under Step Functions' 256 KiB (docs/scale.md).
 */
export const MAX_CHILDREN = 2000;

export const handler = taskHandler<
  unknown,
  { topic: string; groups: readonly string[]; children: PartitionGroup[]; slices: string[] }
>(async (input) => {
  const { topic, groups, partitionsPerChild } = parsePlanInput(input);
  const rt = await fanOutRuntime();
  const count = await rt.partitionCount(topic);
  const children = partitionGroups(count, perChild(count, partitionsPerChild));
  if (children.length > MAX_CHILDREN)
    throw new InvalidInputError(
      `partitionsPerChild: ${topic}'s ${count} partitions would need ${children.length} children; at most ${MAX_CHILDREN}`,
      { field: 'partitionsPerChild' },
    );
  return {
    topic,
    groups: groups ?? rt.config.groups,
    children,
    slices: children.map((c) => c.slice),
  };
});
