// One child of the fan-out audit: reads its partitions into its slice until its deadline.
import { type SliceSummary, scanSlice } from '../core/audit/scan-slice.js';
import { taskHandler } from '../platform/task.js';
import { parseChildInput } from './fan-out-input.js';
import { fanOutRuntime } from './fan-out-runtime.js';
import { scanDeadline } from './scan-deadline.js';

export const handler = taskHandler<unknown, SliceSummary>(async (input, context) => {
  const request = parseChildInput(input);
  const rt = await fanOutRuntime();
  return scanSlice(rt, {
    ...request,
    bucketMs: rt.config.bucketSeconds * 1000,
    scanDeadlineAt: scanDeadline(
      Date.now(),
      context.getRemainingTimeInMillis(),
      rt.config.scanTimeoutMs,
    ),
  });
});
