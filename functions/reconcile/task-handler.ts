// Reconcile on an EventBridge schedule or as a Step Functions task: the input is ignored beyond
// its shape (a scheduled event or `{}`). The output is a summary of bounded size (counts, the
// groups with problems, where the per-group reports are stored): the whole report grows ~600
// bytes a partition and would exceed Step Functions' 256 KiB task result past ~430 partitions.
import { taskHandler } from '../platform/task.js';
import { reconcileRuntime } from '../reconciling/runtime.js';
import { reconcileSummarized } from './run-summary.js';

export const handler = taskHandler(async () => reconcileSummarized(await reconcileRuntime()));
