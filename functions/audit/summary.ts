import type { AuditReport } from '../core/audit/ports.js';

/** What an audit task returns of a stored report (the report itself is read by its id). */
export interface AuditSummary {
  readonly auditId: string;
  readonly topic: string;
  readonly complete: boolean;
  readonly scanned: number;
  readonly streams: number;
  readonly settled: { readonly landed: number; readonly notWritten: number };
}

export function summarize(topic: string, report: AuditReport & { auditId: string }): AuditSummary {
  return {
    auditId: report.auditId,
    topic,
    complete: report.complete,
    scanned: report.scanned,
    streams: report.streams.length,
    settled: report.settled,
  };
}
