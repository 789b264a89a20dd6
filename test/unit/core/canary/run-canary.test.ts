import { describe, expect, it } from 'vitest';
import {
  type CanaryOutcome,
  type CanaryPorts,
  percentiles,
  runCanary,
} from '../../../../functions/core/canary/run-canary.js';
import { Deadline } from '../../../../functions/core/shared/deadline.js';
import { cleanCanaryRun } from '../../../helpers/canary-report.js';

// The canary's accounting over a fake cluster: what was answered against what was read back.
interface Log {
  /** Per partition, the records in it: stream and seq. */
  readonly partitions: Array<Array<{ stream: string; seq: number }>>;
}

type Fate = 'written' | 'answer-only' | 'write-twice' | CanaryOutcome;

/** Publishing appends to the fake log and answers with the offset it got, unless told otherwise. */
function fakePorts(
  log: Log,
  fate: (seq: number) => Fate,
  readComplete = true,
): CanaryPorts & { published: number } {
  let seq = 0;
  let clock = 0;
  const ports = {
    published: 0,
    async partitions() {
      return log.partitions.length;
    },
    async publish(request: { stream: string; partition: number }): Promise<CanaryOutcome> {
      ports.published++;
      seq++;
      clock += 2 + (seq % 5); // 3–7 ms a request
      const records = log.partitions[request.partition] ?? [];
      const f = fate(seq);
      if (typeof f === 'object') return f;
      const offset = records.length;
      // answer-only: acknowledged, never in the log (the next record takes its offset).
      if (f !== 'answer-only') records.push({ stream: request.stream, seq });
      if (f === 'write-twice') records.push({ stream: request.stream, seq });
      return { status: 'ACKED', seq, partition: request.partition, offset };
    },
    async readBack(
      _topic: string,
      from: ReadonlyMap<number, number>,
      _deadline: Deadline,
      onRecord: Parameters<CanaryPorts['readBack']>[3],
    ) {
      clock += 50;
      for (const [partition, first] of from) {
        const records = log.partitions[partition] ?? [];
        for (let offset = first; offset < records.length; offset++) {
          const r = records[offset] as { stream: string; seq: number };
          onRecord({ stream: r.stream, seq: r.seq, partition, offset });
        }
      }
      return { complete: readComplete };
    },
    now: () => clock,
  };
  return ports;
}

const config = { topic: 'tally-canary', stream: 'tally-canary', recordsPerPartition: 2 };
const deadline = () => new Deadline(Date.now() + 60_000);

describe('canary', () => {
  it('publishes to every partition, reads every record back, and reports a clean run', async () => {
    const log: Log = { partitions: [[{ stream: 'other', seq: 1 }], [], []] };
    const ports = fakePorts(log, () => 'written');
    const report = await runCanary(ports, config, deadline());
    expect(ports.published).toBe(6);
    expect(report).toMatchObject({ ...cleanCanaryRun(3, 2), readBackMs: 50 });
    // 3, 4, 5, 6, 2, 3 ms
    expect(report.publishLatencyMs).toEqual({ p50: 3, p99: 6, max: 6 });
  });

  it('names a record answered ACKED that the log does not hold, and one held twice', async () => {
    const log: Log = { partitions: [[], []] };
    const ports = fakePorts(log, (seq) =>
      seq === 2 ? 'answer-only' : seq === 3 ? 'write-twice' : 'written',
    );
    const report = await runCanary(ports, config, deadline());
    expect(report.lost).toEqual([2]);
    expect(report.duplicated).toEqual([3]);
    expect(report.availability).toBe(1);
  });

  it('counts what was not acknowledged, and judges no loss from a read-back cut short', async () => {
    const log: Log = { partitions: [[]] };
    const outcomes: CanaryOutcome[] = [
      { status: 'NOT_SENT', seq: 1, message: 'broker down' },
      { status: 'ACKED', seq: 2, partition: 0, offset: 5 }, // not in the log
    ];
    const ports = fakePorts(log, (seq) => outcomes[seq - 1] as CanaryOutcome, false);
    const report = await runCanary(ports, { ...config, recordsPerPartition: 2 }, deadline());
    expect(report).toMatchObject({
      attempted: 2,
      acked: 1,
      availability: 0.5,
      notAcked: { NOT_SENT: 1 },
      readBackComplete: false,
      lost: [],
    });
  });

  it('stops publishing at its deadline', async () => {
    const ports = fakePorts({ partitions: [[], []] }, () => 'written');
    const report = await runCanary(ports, config, new Deadline(Date.now() - 1));
    expect(report).toMatchObject({ attempted: 0, availability: 1, publishLatencyMs: null });
  });

  it('takes nearest-rank percentiles', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentiles(values)).toEqual({ p50: 50, p99: 99, max: 100 });
    expect(percentiles([7])).toEqual({ p50: 7, p99: 7, max: 7 });
    expect(percentiles([])).toBeNull();
  });
});
