import type { LedgerBlock } from '../publish/ports.js';
import type { RecordOutcome } from '../shared/outcomes.js';
import type { GroupCounts } from './counted-view.js';
import type {
  AuditPorts,
  AuditReport,
  AuditRequest,
  LinkedFindings,
  ReconcileEvent,
} from './ports.js';
import { newest, REPORT_ROWS } from './retention.js';
import type { AuditFindings, BucketRow } from './stream-audit.js';
import type { TopicLog } from './topic-log.js';

// What a report says beside the findings: capped lists, the reconcile events that explain a
// group's redeliveries, and the topic's time buckets.

/** Lost seqs whose acknowledged place a report names, one by one. */
const LOST_PLACED = 1000;
const LEDGER_READS = 100;

export function capped(findings: AuditFindings): {
  findings: AuditFindings;
  leftOff?: Record<string, number>;
} {
  const leftOff: Record<string, number> = {};
  const cut = <T>(name: string, items: readonly T[]): T[] => {
    const { kept, leftOff: n } = newest(items);
    if (n > 0) leftOff[name] = n;
    return kept;
  };
  const cutFindings: AuditFindings = {
    ...findings,
    producerDuplicates: cut('producerDuplicates', findings.producerDuplicates),
    consumerDuplicates: cut('consumerDuplicates', findings.consumerDuplicates),
    lost: cut('lost', findings.lost),
    pending: cut('pending', findings.pending),
    unknownLanded: cut('unknownLanded', findings.unknownLanded),
    unknownAbsent: cut('unknownAbsent', findings.unknownAbsent),
  };
  return Object.keys(leftOff).length > 0
    ? { findings: cutFindings, leftOff }
    : { findings: cutFindings };
}

/** Names where lost records were acknowledged and links redeliveries to reconcile's events. */
export async function link(
  ports: AuditPorts,
  topic: string,
  stream: string,
  uncapped: AuditFindings,
  buckets: BucketRow[],
): Promise<LinkedFindings> {
  const { findings, leftOff } = capped(uncapped);
  const lost: Array<LinkedFindings['lost'][number]> = [];
  // Each lost seq names its own place: a range of two seqs lies at two offsets. Bounded: the
  // first LOST_PLACED seqs of the report, from at most LEDGER_READS blocks, each read once.
  let placed = 0;
  let reads = 0;
  for (const range of findings.lost) {
    const each: Array<{ seq: number; partition: number; offset: number }> = [];
    let block: LedgerBlock | undefined;
    for (let seq = range.from; seq <= range.to && placed < LOST_PLACED; seq++, placed++) {
      if (block === undefined || seq >= block.firstSeq + block.outcomes.length) {
        if (reads++ >= LEDGER_READS) break;
        block = await ports.ledger.find(stream, seq);
        if (block === undefined) break;
      }
      const outcome: RecordOutcome | undefined = block.outcomes[seq - block.firstSeq];
      if (outcome?.status === 'ACKED') {
        each.push({ seq, partition: outcome.partition, offset: Number(outcome.offset) });
      }
    }
    const [first] = each;
    lost.push(
      first?.seq === range.from
        ? {
            ...range,
            acked: { partition: first.partition, offset: first.offset },
            ackedEach: each,
          }
        : range,
    );
  }
  const events = new Map<string, ReconcileEvent[]>();
  for (const group of new Set(findings.consumerDuplicates.map((d) => d.group))) {
    events.set(group, (await ports.reconcile?.events(group, topic)) ?? []);
  }
  return {
    ...findings,
    lost,
    consumerDuplicates: findings.consumerDuplicates.map((d) => ({
      ...d,
      reconcileEvents: events.get(d.group) ?? [],
    })),
    buckets,
    ...(leftOff ? { leftOff } : {}),
  };
}

/**
 * Per time bucket, the topic's records in the log and count-only receipts per group (`counts`,
 * from CountedView.reported): the newest REPORT_ROWS buckets one by one, and a first row summing
 * older ones (folded or not listed).
 */
export function topicBuckets(
  request: Pick<AuditRequest, 'bucketMs'>,
  state: TopicLog,
  counts: ReadonlyMap<string, GroupCounts>,
): AuditReport['topicBuckets'] {
  const counted = new Map<number, Record<string, number>>();
  const older = { inLog: state.olderInLog, counted: {} as Record<string, number> };
  let countsSince = Number.POSITIVE_INFINITY;
  let countsUntil = 0;
  for (const [group, c] of counts) {
    for (const [start, n] of c.buckets) {
      const row = counted.get(start) ?? {};
      row[group] = (row[group] ?? 0) + n;
      counted.set(start, row);
    }
    countsUntil = Math.max(countsUntil, c.olderUntil ?? 0);
    if (c.olderSince === undefined) continue;
    older.counted[group] = c.older;
    countsSince = Math.min(countsSince, c.olderSince);
  }
  const countsFolded = countsSince < Number.POSITIVE_INFINITY;
  const starts = [...new Set([...state.topicBuckets.keys(), ...counted.keys()])].sort(
    (a, b) => a - b,
  );
  const rowOf = (start: number) => ({
    inLog: start < state.foldedBefore ? 0 : (state.topicBuckets.get(start) ?? 0),
    counted: counted.get(start) ?? {},
  });
  const { kept, leftOff } = newest(starts, REPORT_ROWS);
  const rows: Array<AuditReport['topicBuckets'][number]> = kept.map((start) => ({
    start: new Date(start).toISOString(),
    ...rowOf(start),
  }));
  const unlisted = starts.slice(0, leftOff);
  if (unlisted.length === 0 && state.olderInLog === 0 && !countsFolded) return rows;
  for (const start of unlisted) {
    const row = rowOf(start);
    older.inLog += row.inLog;
    for (const [group, n] of Object.entries(row.counted))
      older.counted[group] = (older.counted[group] ?? 0) + n;
  }
  const since = Math.min(
    state.foldedSince ?? Number.POSITIVE_INFINITY,
    unlisted[0] ?? Number.POSITIVE_INFINITY,
    countsSince,
  );
  const until = Math.max(
    state.foldedBefore,
    countsFolded ? state.counted.foldedBefore : 0,
    countsUntil,
    (unlisted[unlisted.length - 1] ?? 0) + request.bucketMs,
  );
  return [
    { start: new Date(since).toISOString(), until: new Date(until).toISOString(), ...older },
    ...rows,
  ];
}
