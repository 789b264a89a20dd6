import { describe, expect, it } from 'vitest';
import { summarize } from '../../../../functions/core/reconcile/group-report.js';
import type { PartitionReport } from '../../../../functions/core/reconcile/ports.js';

describe('summarize', () => {
  it('rolls up a group of 200,000 partitions (a spread of that many arguments overflows)', () => {
    const partitions: PartitionReport[] = Array.from({ length: 200_000 }, (_, partition) => ({
      topic: `t-${Math.floor(partition / 1000)}`,
      partition: partition % 1000,
      owner: null,
      clientId: null,
      committed: 10,
      logStart: 0,
      logEnd: 10 + (partition % 7),
      start: null,
      end: null,
      status: 'OK',
      complete: 1,
      currentLag: partition % 7,
      timeLagSeconds: partition === 123_456 ? 99 : 1,
    }));
    const report = summarize(
      { groupId: 'big', state: 'Stable', members: [], partitions: [] },
      partitions,
    );
    expect(report).toMatchObject({ partitionCount: 200_000, maxLag: 6, maxTimeLagSeconds: 99 });
    expect(report.totalLag).toBe(partitions.reduce((sum, p) => sum + (p.currentLag ?? 0), 0));
  });
});
