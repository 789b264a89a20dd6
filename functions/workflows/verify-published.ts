// The publish-and-verify workflow's last task: succeeds only when every published record is
// ACKED in the ledger (UNKNOWN outcomes settled by the audit count as they were settled) and is
// in the log exactly once by the audit that ran after it — a complete audit naming none of them
// lost or duplicated. Otherwise it fails with VerificationFailedError listing what was found.

import type { AuditReport } from '../core/audit/ports.js';
import { InvalidInputError, VerificationFailedError } from '../core/shared/errors.js';
import { isPlainObject } from '../core/shared/input-checks.js';
import { taskHandler } from '../platform/task.js';
import { verifyRuntime } from './verify-runtime.js';

interface Problem {
  readonly idempotencyKey: string;
  readonly stream: string | undefined;
  readonly seq: number | undefined;
  readonly problem: string;
}

function parseInput(input: unknown) {
  const topic = isPlainObject(input) ? input.topic : undefined;
  const published = isPlainObject(input) ? input.published : undefined;
  const audits = isPlainObject(input) ? input.audits : undefined;
  if (typeof topic !== 'string') {
    throw new InvalidInputError('topic: the topic the records were published to', {
      field: 'topic',
    });
  }
  if (
    !Array.isArray(published) ||
    !published.every((p) => isPlainObject(p) && typeof p.idempotencyKey === 'string')
  ) {
    throw new InvalidInputError('published: the publish task outputs', { field: 'published' });
  }
  if (
    !Array.isArray(audits) ||
    !audits.every((a) => isPlainObject(a) && typeof a.auditId === 'string')
  ) {
    throw new InvalidInputError('audits: the audit task output `audits`', { field: 'audits' });
  }
  return {
    topic,
    published: published as Array<{
      idempotencyKey: string;
      stream?: unknown;
      seq?: unknown;
      error?: unknown;
    }>,
    auditIds: audits.map((a) => a.auditId as string),
  };
}

const within = (seq: number, ranges: ReadonlyArray<{ from: number; to: number }>) =>
  ranges.some((r) => seq >= r.from && seq <= r.to);

export const handler = taskHandler<unknown, { verified: number; auditIds: string[] }>(
  async (input) => {
    const { topic, published, auditIds } = parseInput(input);
    const rt = await verifyRuntime();
    const reports: AuditReport[] = [];
    for (const id of auditIds) {
      const report = await rt.store.get(id);
      if (!report) throw new VerificationFailedError(`audit ${id} is not stored`);
      reports.push(report);
    }
    const anyComplete = reports.some((r) => r.complete);
    const problems: Problem[] = [];
    for (const record of published) {
      const { idempotencyKey } = record;
      const stream = typeof record.stream === 'string' ? record.stream : topic;
      const seq = Number.isSafeInteger(record.seq) ? (record.seq as number) : undefined;
      const say = (problem: string) => problems.push({ idempotencyKey, stream, seq, problem });
      if (seq === undefined) {
        say(`not published: ${String(record.error ?? 'no seq')}`);
        continue;
      }
      const block = await rt.ledger.find(stream, seq);
      const outcome = block?.outcomes[seq - block.firstSeq];
      if (outcome?.status !== 'ACKED') {
        say(`the ledger says ${outcome?.status ?? 'nothing'}`);
        continue;
      }
      const findings = reports.flatMap((r) => r.streams.filter((s) => s.stream === stream));
      if (!anyComplete || findings.length === 0) {
        say('no complete audit read its stream');
      } else if (findings.some((f) => within(seq, f.lost))) {
        say('acknowledged but not in the log (lost)');
      } else {
        const copies = findings.flatMap((f) => f.producerDuplicates.filter((d) => d.seq === seq));
        if (copies.length > 0) say(`in the log ${copies[0]?.times} times`);
      }
    }
    if (problems.length > 0) {
      throw new VerificationFailedError(
        `${problems.length} of ${published.length} records not ACKED and present exactly once: ${JSON.stringify(problems.slice(0, 50))}`,
      );
    }
    return { verified: published.length, auditIds };
  },
);
