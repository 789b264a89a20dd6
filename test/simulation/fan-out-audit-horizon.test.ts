import { describe, expect, it } from 'vitest';
import { DAY, MINUTE, plantsOn, simulate } from '../helpers/audit-simulation.js';

// The fan-out audit over months, as core-audit-horizon.test.ts runs the sequential one: 60
// simulated days of 15-minute runs (5,760) on 10 streams, each run one child per partition
// (scanSlice) and a merge of their slices, with producer duplicates, losses and redeliveries
// planted on chosen days. A slice holds what its child read since the last merge, so it must
// not grow with the topic's age, and the merged reports must find every plant and nothing else.

/** The stated bounds, gzipped as the store writes them (an item holds 400 KB). */
const SLICE_BOUND = 64 * 1024;
const CHECKPOINT_BOUND = 64 * 1024;
const REPORT_BOUND = 256 * 1024;
const DAYS = 60;
const RUNS_A_DAY = DAY / (15 * MINUTE);

const plants = plantsOn([1, 2, 30, 45, 58]);

describe('fan-out audit over 60 days', () => {
  it('keeps every slice and the checkpoint under their bounds and reports every planted finding', async () => {
    let runsDone = 0;
    const result = await simulate({
      streams: 10,
      days: DAYS,
      auditEveryMs: 15 * MINUTE,
      recordsPerRun: 1,
      bucketMs: 5 * MINUTE,
      retentionMs: 7 * DAY,
      plants,
      fanOut: { perChild: 1 },
      afterRun: (run) => {
        runsDone = run.run;
        const wrong = run.missed.length > 0 || run.unexpected.length > 0;
        if (
          run.sliceBytes > SLICE_BOUND ||
          run.checkpointBytes > CHECKPOINT_BOUND ||
          run.reportBytes > REPORT_BOUND ||
          !run.report.complete ||
          wrong
        )
          throw new Error(
            `run ${run.run} (day ${run.day.toFixed(2)}): slice ${run.sliceBytes} B, checkpoint ${run.checkpointBytes} B gzipped, report ${run.reportBytes} B, complete ${run.report.complete}, missed ${JSON.stringify(run.missed)}, not planted ${run.unexpected.slice(0, 5)}`,
          );
      },
    });
    expect(runsDone).toBe(DAYS * RUNS_A_DAY);
    expect(result.missed).toEqual([]);
    expect(result.maxSliceBytes).toBeGreaterThan(0);
    expect(result.maxSliceBytes).toBeLessThanOrEqual(SLICE_BOUND);
    expect(result.maxCheckpointBytes).toBeLessThanOrEqual(CHECKPOINT_BOUND);
    const after = result.checkpointBytesAfterDay;
    console.log(
      `fan-out, 10 streams, ${DAYS} days: slice max ${result.maxSliceBytes} B, checkpoint max ${result.maxCheckpointBytes} B; after 30/60 days ${after[30]}/${after[60]} B gzipped; report max ${result.maxReportBytes} B`,
    );
  });
});
