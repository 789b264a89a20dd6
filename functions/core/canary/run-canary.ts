// The canary (as LinkedIn's Xinfra Monitor runs one): every run publishes a few synthetic records
// to each partition of a canary topic through the real publish path, one request each, reads them
// back from the log (from the first answered offset to the end) by an independent consumer, and reports produce availability, publish latency
// percentiles, records lost (answered ACKED, absent from the log) and duplicated (one seq at two
// offsets). An audit of the canary topic (its own schedule) judges the same records again.

import type { Deadline } from '../shared/deadline.js';

export interface CanaryConfig {
  readonly topic: string;
  /** The stream the canary's records are numbered in (its own: never a real stream). */
  readonly stream: string;
  /** Records per partition per run. */
  readonly recordsPerPartition: number;
}

/** One canary publish's answer, as the publish path gave it. */
export type CanaryOutcome =
  | {
      readonly status: 'ACKED';
      readonly seq: number;
      readonly partition: number;
      readonly offset: number;
    }
  | { readonly status: string; readonly seq?: number; readonly message?: string | undefined };

export interface CanaryPorts {
  /** The topic's partition count. */
  partitions(topic: string, deadline: Deadline): Promise<number>;
  /** Publishes one record to `partition` through the real publish path. */
  publish(
    request: {
      readonly topic: string;
      readonly stream: string;
      readonly partition: number;
      readonly value: string;
    },
    deadline: Deadline,
  ): Promise<CanaryOutcome>;
  /**
   * Reads the named partitions from the given offsets to their ends (a copy written after the
   * answer counts too); calls `onRecord` with each record's `tally.stream` and `tally.seq`.
   * Resolves whether it read every partition to its end.
   */
  readBack(
    topic: string,
    from: ReadonlyMap<number, number>,
    deadline: Deadline,
    onRecord: (record: {
      readonly stream: string | undefined;
      readonly seq: number | undefined;
      readonly partition: number;
      readonly offset: number;
    }) => void,
  ): Promise<{ readonly complete: boolean }>;
  /** ms, a monotonic clock. */
  now(): number;
}

export interface Percentiles {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export interface CanaryReport {
  readonly topic: string;
  readonly partitions: number;
  readonly attempted: number;
  readonly acked: number;
  /** acked ÷ attempted (1 when nothing was attempted). */
  readonly availability: number;
  /** Outcomes other than ACKED, by status. */
  readonly notAcked: Readonly<Record<string, number>>;
  /** Wall time of each publish request, ms. */
  readonly publishLatencyMs: Percentiles | null;
  /** From the last answer until every ACKED record was read back (or the read gave up), ms. */
  readonly readBackMs: number;
  /** The read-back covered every ACKED record's offset: `lost` is then a finding. */
  readonly readBackComplete: boolean;
  /** Seqs answered ACKED and not found at their offsets. */
  readonly lost: readonly number[];
  /** Seqs found more than once in the ranges read. */
  readonly duplicated: readonly number[];
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number {
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function percentiles(values: readonly number[]): Percentiles | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] as number,
  };
}

export async function runCanary(
  ports: CanaryPorts,
  config: CanaryConfig,
  deadline: Deadline,
): Promise<CanaryReport> {
  const partitions = await ports.partitions(config.topic, deadline);
  const acked = new Map<number, { partition: number; offset: number }>();
  const notAcked: Record<string, number> = {};
  const latencies: number[] = [];
  let attempted = 0;
  // One request at a time, partition after partition: what a client publishing singly sees.
  for (let round = 0; round < config.recordsPerPartition; round++) {
    for (let partition = 0; partition < partitions; partition++) {
      if (deadline.expired()) break;
      attempted++;
      const started = ports.now();
      const value = JSON.stringify({ canary: config.topic, partition, round, at: Date.now() });
      const outcome = await ports.publish(
        { topic: config.topic, stream: config.stream, partition, value },
        deadline,
      );
      latencies.push(ports.now() - started);
      if (outcome.status === 'ACKED' && 'offset' in outcome) {
        acked.set(outcome.seq, { partition: outcome.partition, offset: outcome.offset });
      } else {
        notAcked[outcome.status] = (notAcked[outcome.status] ?? 0) + 1;
      }
    }
  }

  const from = new Map<number, number>();
  for (const { partition, offset } of acked.values()) {
    from.set(partition, Math.min(from.get(partition) ?? offset, offset));
  }
  const seen = new Map<number, number>();
  const readStarted = ports.now();
  const { complete } =
    from.size === 0
      ? { complete: true }
      : await ports.readBack(config.topic, from, deadline, (record) => {
          if (record.stream !== config.stream || record.seq === undefined) return;
          seen.set(record.seq, (seen.get(record.seq) ?? 0) + 1);
        });
  const readBackMs = ports.now() - readStarted;
  const lost = complete
    ? [...acked.keys()].filter((seq) => !seen.has(seq)).sort((a, b) => a - b)
    : [];
  const duplicated = [...seen]
    .filter(([, n]) => n > 1)
    .map(([seq]) => seq)
    .sort((a, b) => a - b);
  return {
    topic: config.topic,
    partitions,
    attempted,
    acked: acked.size,
    availability: attempted === 0 ? 1 : acked.size / attempted,
    notAcked,
    publishLatencyMs: percentiles(latencies),
    readBackMs,
    readBackComplete: complete,
    lost,
    duplicated,
  };
}
