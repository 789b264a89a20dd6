// The reconcile fan-out's last task: the children's shard summaries as one run's summary. Reads
// and writes nothing: the children stored everything per group.
import { mergeShardSummaries } from '../core/reconcile/shard-summary.js';
import { loadReconcileConfig } from '../platform/config.js';
import { log } from '../platform/log.js';
import { taskHandler } from '../platform/task.js';
import { parseMergeInput } from './fan-out-input.js';

const config = loadReconcileConfig();

export const handler = taskHandler<unknown, object>(async (input) => {
  const { results } = parseMergeInput(input);
  const summary = mergeShardSummaries(results, config.tables.reconcileReports);
  log('info', 'reconcile fan-out merged', {
    complete: summary.complete,
    groups: summary.groups,
    children: summary.children,
    statuses: summary.statuses,
  });
  return summary;
});
