import type { RecordOutcome } from './outcomes.js';
import type { LedgerBlock } from './publish-ports.js';
import type { SeqRange } from './seq-ranges.js';
import { type AuditFindings, StreamAudit } from './stream-audit.js';

// An audit of one topic: scans the log, reads the ledger and the receipts of the given groups for
// every stream found, compares them, and settles UNKNOWN outcomes in the ledger.

export interface AuditPorts {
  readonly ledger: {
    listBlocks(stream: string): Promise<LedgerBlock[]>;
    write(block: LedgerBlock): Promise<void>;
  };
  readonly log: {
    scan(
      topic: string,
      onRecord: (record: {
        partition: number;
        offset: number;
        headers: Readonly<Record<string, string | undefined>>;
      }) => void,
      timeoutMs: number,
    ): Promise<number>;
  };
  readonly receipts: {
    list(group: string, stream: string): Promise<Array<{ seqs: readonly SeqRange[] }>>;
  };
  /** Reconcile's REWIND/LOST events of a group on a topic, to explain consumer-side duplicates. */
  readonly reconcile?: { events(group: string, topic: string): Promise<ReconcileEvent[]> };
}

export interface ReconcileEvent {
  readonly at: string;
  readonly partition: number;
  readonly status: 'REWIND' | 'LOST';
  readonly detail: object | undefined;
}

type ConsumerDuplicate = AuditFindings['consumerDuplicates'][number];

/** Findings, with each consumer-side duplicate linked to the reconcile events that explain it. */
export type LinkedFindings = Omit<AuditFindings, 'consumerDuplicates'> & {
  readonly consumerDuplicates: ReadonlyArray<
    ConsumerDuplicate & { readonly reconcileEvents: readonly ReconcileEvent[] }
  >;
};

export interface AuditRequest {
  readonly topic: string;
  readonly groups: readonly string[];
  readonly scanTimeoutMs: number;
  /**
   * An UNKNOWN absent from the log is settled as not written only when its block is older than
   * this: a request still in flight must not be judged.
   */
  readonly horizonMs: number;
}

export interface AuditReport {
  readonly topic: string;
  readonly at: string;
  readonly scanned: number;
  /** Records in the topic without `tally.*` headers (not published through Tally). */
  readonly untracked: number;
  readonly streams: readonly LinkedFindings[];
  /** UNKNOWN outcomes this run settled in the ledger. */
  readonly settled: { readonly landed: number; readonly notWritten: number };
}

/** Rewrites a block's UNKNOWN outcomes the log has settled. */
function settle(
  block: LedgerBlock,
  findings: AuditFindings,
  horizonAt: number,
): LedgerBlock | undefined {
  const landed = new Map(findings.unknownLanded.map((u) => [u.seq, u]));
  const absent = (seq: number) =>
    findings.unknownAbsent.some(([from, to]) => seq >= from && seq <= to);
  let changed = false;
  const outcomes = block.outcomes.map((outcome, i): RecordOutcome => {
    if (outcome.status !== 'UNKNOWN') return outcome;
    const seq = block.firstSeq + i;
    const found = landed.get(seq);
    if (found) {
      changed = true;
      return { status: 'ACKED', partition: found.partition, offset: String(found.offset) };
    }
    if (absent(seq) && block.writtenAt !== undefined && block.writtenAt < horizonAt) {
      changed = true;
      return { status: 'NOT_SENT', message: 'not in the log when the audit read it: not written' };
    }
    return outcome;
  });
  return changed ? { ...block, outcomes } : undefined;
}

export function createAuditor(ports: AuditPorts) {
  return {
    async run(request: AuditRequest): Promise<AuditReport> {
      const at = new Date().toISOString();
      const audits = new Map<string, StreamAudit>();
      let untracked = 0;
      const scanned = await ports.log.scan(
        request.topic,
        (record) => {
          const stream = record.headers['tally.stream'];
          const seq = Number(record.headers['tally.seq']);
          const session = record.headers['tally.session'] ?? '';
          if (stream === undefined || !Number.isSafeInteger(seq) || seq < 1) {
            untracked++;
            return;
          }
          const audit = audits.get(stream) ?? new StreamAudit(stream);
          audit.addLogEntry({ seq, partition: record.partition, offset: record.offset, session });
          audits.set(stream, audit);
        },
        request.scanTimeoutMs,
      );
      if (!audits.has(request.topic)) audits.set(request.topic, new StreamAudit(request.topic));
      const streams: LinkedFindings[] = [];
      let landed = 0;
      let notWritten = 0;
      for (const [stream, audit] of audits) {
        const blocks = (await ports.ledger.listBlocks(stream)).filter(
          (b) => b.topic === request.topic,
        );
        for (const block of blocks) audit.addLedgerBlock(block);
        for (const group of request.groups) {
          for (const receipt of await ports.receipts.list(group, stream))
            audit.addReceipts(group, receipt.seqs);
        }
        const findings = audit.findings();
        const horizonAt = Date.parse(at) - request.horizonMs;
        for (const block of blocks) {
          const settled = settle(block, findings, horizonAt);
          if (!settled) continue;
          await ports.ledger.write(settled);
          block.outcomes.forEach((before, i) => {
            const after = settled.outcomes[i];
            if (before.status !== 'UNKNOWN' || after === undefined) return;
            if (after.status === 'ACKED') landed++;
            if (after.status === 'NOT_SENT') notWritten++;
          });
        }
        const events = new Map<string, ReconcileEvent[]>();
        for (const group of new Set(findings.consumerDuplicates.map((d) => d.group))) {
          events.set(group, (await ports.reconcile?.events(group, request.topic)) ?? []);
        }
        streams.push({
          ...findings,
          consumerDuplicates: findings.consumerDuplicates.map((d) => ({
            ...d,
            reconcileEvents: events.get(d.group) ?? [],
          })),
        });
      }
      return {
        topic: request.topic,
        at,
        scanned,
        untracked,
        streams,
        settled: { landed, notWritten },
      };
    },
  };
}
