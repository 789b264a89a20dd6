import type { CanaryReport } from '../../functions/core/canary/run-canary.js';

/**
 * What a canary run that lost nothing reports: every record acknowledged and read back once.
 * For `toMatchObject`: fields that vary (latencies, timings) are left out.
 */
export function cleanCanaryRun(partitions: number, recordsPerPartition: number) {
  const attempted = partitions * recordsPerPartition;
  return {
    partitions,
    attempted,
    acked: attempted,
    availability: 1,
    notAcked: {},
    readBackComplete: true,
    lost: [],
    duplicated: [],
  } satisfies Partial<CanaryReport>;
}
