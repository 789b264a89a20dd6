// One child of the reconcile fan-out: a reconcile run over its shard's groups only, writing their
// mappings, offset history, reports and incidents itself; returns its summary within its share
// of the Map's output (reconcile-fan-out.ts).
import { shardScope } from '../core/reconcile/group-shards.js';
import { type ShardSummary, shardBudget, shardSummary } from '../core/reconcile/shard-summary.js';
import { taskHandler } from '../platform/task.js';
import { reconcileRuntime } from '../reconciling/runtime.js';
import { parseChildInput } from './fan-out-input.js';
import { reconcileSummarized } from './run-summary.js';

export const handler = taskHandler<unknown, ShardSummary>(async (input) => {
  const { shard, shards, prefix } = parseChildInput(input);
  const rt = await reconcileRuntime();
  const summary = await reconcileSummarized(rt, shardScope(shard, shards, prefix), {
    shard,
    shards,
  });
  return shardSummary(summary, shard, shardBudget(shards));
});
