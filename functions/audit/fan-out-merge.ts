// The fan-out audit's last task: folds the children's slices into the topic's checkpoint and
// compares the whole with the ledger, as one audit run; stores and returns its report's summary.
import { taskHandler } from '../platform/task.js';
import { parseMergeInput } from './fan-out-input.js';
import { auditRuntime } from './runtime.js';
import { summarize } from './summary.js';

export const handler = taskHandler<unknown, object>(async (input, context) => {
  const { topic, groups, slices } = parseMergeInput(input);
  const rt = await auditRuntime();
  const report = await rt.auditAndStore(
    topic,
    groups ?? rt.config.groups,
    context.getRemainingTimeInMillis(),
    { slices },
  );
  return summarize(topic, report);
});
