import type { AuditReport } from '../audit/ports.js';
import { auditChanges, type StreamCounts, streamCounts } from './audit-changes.js';
import { auditEvent, type EventSink } from './events.js';
import type { NotifyOutcome } from './group-notifier.js';

// After each audit of a topic: one event per stream whose lost or duplicated records grew since
// last notified (audit-notify-rules.ts). The counts noted are one record per topic, written over
// the version read and only with the counts whose events were accepted (or needed none).

export interface NotedCounts {
  readonly streams: ReadonlyMap<string, StreamCounts>;
  /** 0 when nothing is stored. */
  readonly version: number;
}

export interface NotedStore {
  load(topic: string): Promise<NotedCounts>;
  /** Writes over `version`; false when another audit of the topic wrote first. */
  save(
    topic: string,
    streams: ReadonlyMap<string, StreamCounts>,
    version: number,
  ): Promise<boolean>;
}

export function createAuditNotifier(ports: { noted: NotedStore; sink: EventSink }) {
  async function notify(
    report: AuditReport & { readonly auditId: string },
  ): Promise<NotifyOutcome> {
    const noted = await ports.noted.load(report.topic);
    const current = new Map(report.streams.map((s) => [s.stream, streamCounts(s)]));
    const { notify: streams, next } = auditChanges(noted.streams, current);
    const findings = new Map(report.streams.map((s) => [s.stream, s]));
    const accepted = await ports.sink.send(
      streams.map((stream) =>
        auditEvent(
          report,
          stream,
          current.get(stream) as StreamCounts,
          noted.streams.get(stream),
          findings.get(stream)?.lost ?? [],
        ),
      ),
    );
    const failed = streams.filter((_, i) => !accepted[i]);
    for (const stream of failed) {
      // Not delivered: keep what was noted, so the next audit finds the growth again.
      const before = noted.streams.get(stream);
      if (before) next.set(stream, before);
      else next.delete(stream);
    }
    const unchanged =
      next.size === noted.streams.size &&
      [...next].every(([s, c]) => JSON.stringify(noted.streams.get(s)) === JSON.stringify(c));
    const written = unchanged || (await ports.noted.save(report.topic, next, noted.version));
    return {
      sent: streams.length - failed.length,
      failed: failed.length,
      conflicts: written ? 0 : 1,
    };
  }
  return { notify };
}
