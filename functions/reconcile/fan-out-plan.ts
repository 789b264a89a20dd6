// The reconcile fan-out's first task: one child per shard of the consumer groups (group-shards.ts).
// The groups are not passed to the children (a list grows with the cluster; a child's input is
// held to 256 KiB): each child lists them again and keeps its own by hash. The counts here say
// how the groups listed now fall across the shards.
import { prefixScope, shardOf } from '../core/reconcile/group-shards.js';
import { taskHandler } from '../platform/task.js';
import { parsePlanInput } from './fan-out-input.js';
import { fanOutRuntime } from './fan-out-runtime.js';

export const handler = taskHandler<
  unknown,
  {
    shards: number;
    prefix: string;
    groups: number;
    children: Array<{ shard: number; groups: number }>;
  }
>(async (input) => {
  const { shards, prefix } = parsePlanInput(input);
  const rt = await fanOutRuntime();
  const scope = prefixScope(prefix);
  const ids = (await rt.source.groupIds()).filter((id) => scope.owns(id));
  const counts = new Array<number>(shards).fill(0);
  for (const id of ids) {
    const shard = shardOf(id, shards);
    counts[shard] = (counts[shard] ?? 0) + 1;
  }
  return {
    shards,
    prefix,
    groups: ids.length,
    children: counts.map((groups, shard) => ({ shard, groups })),
  };
});
