import { describe, expect, it } from 'vitest';
import { DAY, MINUTE, plantsOn, simulate } from '../helpers/audit-simulation.js';

// The checkpoint must not grow with the topic's age (issue 13): 180 simulated days of audits
// every 15 minutes on 10 streams, with producer duplicates, losses and redeliveries planted on
// chosen days. Traffic is scaled down (the bench runs the traffic); runs and horizon are not.

/** The stated bound: the checkpoint, gzipped as the store writes it. */
const CHECKPOINT_BOUND = 64 * 1024;
/** A report must fit a DynamoDB item (400 KB) with room to spare. */
const REPORT_BOUND = 256 * 1024;
const RUNS_A_DAY = DAY / (15 * MINUTE);

const plants = plantsOn([1, 2, 30, 45, 89, 90, 120, 150, 179]);

describe('audit over 180 days', () => {
  it('keeps the checkpoint under its bound and reports every planted finding', async () => {
    let runsDone = 0;
    const result = await simulate({
      streams: 10,
      days: 180,
      auditEveryMs: 15 * MINUTE,
      recordsPerRun: 1,
      bucketMs: 5 * MINUTE,
      retentionMs: 7 * DAY,
      plants,
      afterRun: ({ run, day, checkpointBytes, reportBytes, missed, unexpected }) => {
        runsDone = run;
        const wrong = missed.length > 0 || unexpected.length > 0;
        if (checkpointBytes > CHECKPOINT_BOUND || reportBytes > REPORT_BOUND || wrong)
          throw new Error(
            `run ${run} (day ${day.toFixed(2)}): checkpoint ${checkpointBytes} B gzipped, report ${reportBytes} B, missed ${JSON.stringify(missed)}, not planted ${unexpected.slice(0, 5)}`,
          );
      },
    });
    expect(runsDone).toBe(180 * RUNS_A_DAY);
    expect(result.missed).toEqual([]);
    expect(result.maxCheckpointBytes).toBeLessThanOrEqual(CHECKPOINT_BOUND);
    expect(result.maxReportBytes).toBeLessThanOrEqual(REPORT_BOUND);
    const after = result.checkpointBytesAfterDay;
    console.log(
      `10 streams, 180 days: checkpoint max ${result.maxCheckpointBytes} B; after 30/90/180 days ${after[30]}/${after[90]}/${after[180]} B gzipped; report max ${result.maxReportBytes} B`,
    );
    // 17,280 runs: ~100 s alone on the 2 shared cores before the ledger's buckets were carried in
    // the checkpoint (~125 s after; every run now loads and saves a week of them per stream).
  });
});
