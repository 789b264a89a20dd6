import type { GroupReport } from '../reconcile/ports.js';
import type { StreamCounts } from './audit-changes.js';
import type { NotifyEvent } from './rules.js';

// The events Tally publishes (EventBridge `source` and `detail-type`) and their details. The
// README's "Notifications" section documents these shapes; change both together.

export const GROUP_EVENT = { source: 'tally.reconcile', detailType: 'Consumer Group Status' };
export const AUDIT_EVENT = { source: 'tally.audit', detailType: 'Audit Finding' };

/** Partitions listed in an event at most (EventBridge takes 256 KB per entry); the rest counted. */
export const MAX_EVENT_PARTITIONS = 50;
/** Lost ranges listed in an audit event at most. */
export const MAX_EVENT_RANGES = 20;

export interface OutgoingEvent {
  readonly source: string;
  readonly detailType: string;
  readonly detail: object;
}

/** Where events go: EventBridge in AWS (and the local stack's stand-in). */
export interface EventSink {
  /** Whether each event was accepted, in order; never rejects (a failure is `false`). */
  send(events: readonly OutgoingEvent[]): Promise<boolean[]>;
}

/** A consumer group's incident opening, repeating or closing, as Burrow's notifier sends it. */
export function groupEvent(
  cluster: string,
  group: string,
  event: NotifyEvent,
  report: GroupReport | undefined,
): OutgoingEvent {
  const bad = (report?.partitions ?? []).filter((p) => p.status !== 'OK');
  return {
    ...GROUP_EVENT,
    detail: {
      cluster,
      group,
      state: event.state,
      reason: event.reason,
      incident: { id: event.incident.id, start: new Date(event.incident.start).toISOString() },
      status: event.status,
      ...(event.previousStatus && { previousStatus: event.previousStatus }),
      complete: report?.complete ?? 0,
      partitionCount: report?.partitionCount ?? 0,
      totalLag: report?.totalLag ?? 0,
      maxLag: report?.maxLag ?? 0,
      maxTimeLagSeconds: report?.maxTimeLagSeconds ?? 0,
      anomalies: report?.anomalies ?? {},
      // The partitions that are not OK, as Burrow's status lists them.
      partitions: bad.slice(0, MAX_EVENT_PARTITIONS).map((p) => ({
        topic: p.topic,
        partition: p.partition,
        status: p.status,
        currentLag: p.currentLag,
        timeLagSeconds: p.timeLagSeconds,
        committed: p.committed,
        logEnd: p.logEnd,
        owner: p.owner,
        clientId: p.clientId,
      })),
      partitionsOmitted: Math.max(0, bad.length - MAX_EVENT_PARTITIONS),
    },
  };
}

const figures = (c: StreamCounts) => ({
  lost: c.lost,
  duplicates: { producer: c.producerDuplicates, consumer: c.consumerDuplicates },
});

/** A stream whose lost or duplicated records grew in an audit. */
export function auditEvent(
  audit: { readonly auditId: string; readonly topic: string; readonly complete: boolean },
  stream: string,
  counts: StreamCounts,
  before: StreamCounts | undefined,
  lostRanges: ReadonlyArray<{ readonly from: number; readonly to: number }>,
): OutgoingEvent {
  return {
    ...AUDIT_EVENT,
    detail: {
      auditId: audit.auditId,
      topic: audit.topic,
      stream,
      complete: audit.complete,
      ...figures(counts),
      previously: figures(before ?? { lost: 0, producerDuplicates: 0, consumerDuplicates: {} }),
      lostRanges: lostRanges.slice(0, MAX_EVENT_RANGES).map(({ from, to }) => ({ from, to })),
    },
  };
}
