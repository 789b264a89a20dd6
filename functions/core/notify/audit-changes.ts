import type { LinkedFindings } from '../audit/ports.js';

// When an audit's findings are worth an event. A report's counts are totals over what the audit
// still holds (its retention, 7 days by default), not what this run found: notifying every run
// would repeat one loss every 15 minutes for a week. So a stream is notified when its lost or
// duplicated records grew since the counts last notified, once per change; the counts noted per
// stream are kept only while non-zero and while the stream is in the report, which bounds them.

export interface StreamCounts {
  readonly lost: number;
  /** Extra copies in the log (producer side). */
  readonly producerDuplicates: number;
  /** Extra deliveries per group (consumer side). */
  readonly consumerDuplicates: Readonly<Record<string, number>>;
}

const sum = (values: Iterable<number>) => {
  let total = 0;
  for (const v of values) total += v;
  return total;
};

export const duplicatesOf = (c: StreamCounts) =>
  c.producerDuplicates + sum(Object.values(c.consumerDuplicates));

/** A stream's totals from its rows, as its metrics count them (functions/audit/metrics.ts). */
export function streamCounts(stream: Pick<LinkedFindings, 'buckets'>): StreamCounts {
  const consumer: Record<string, number> = {};
  for (const row of stream.buckets) {
    for (const [group, n] of Object.entries(row.redelivered)) {
      consumer[group] = (consumer[group] ?? 0) + n;
    }
  }
  return {
    lost: sum(stream.buckets.map((b) => b.lost)),
    producerDuplicates: sum(stream.buckets.map((b) => b.duplicatesInLog)),
    consumerDuplicates: Object.fromEntries(Object.entries(consumer).filter(([, n]) => n > 0)),
  };
}

const isZero = (c: StreamCounts) => c.lost === 0 && duplicatesOf(c) === 0;

/**
 * The streams to notify (lost or duplicated records grew since noted) and the counts to note
 * once their events were accepted: the current ones of every stream with findings.
 */
export function auditChanges(
  noted: ReadonlyMap<string, StreamCounts>,
  current: ReadonlyMap<string, StreamCounts>,
): { readonly notify: string[]; readonly next: Map<string, StreamCounts> } {
  const notify: string[] = [];
  const next = new Map<string, StreamCounts>();
  for (const [stream, counts] of current) {
    const before = noted.get(stream);
    if (
      counts.lost > (before?.lost ?? 0) ||
      duplicatesOf(counts) > (before ? duplicatesOf(before) : 0)
    ) {
      notify.push(stream);
    }
    if (!isZero(counts)) next.set(stream, counts);
  }
  return { notify, next };
}
