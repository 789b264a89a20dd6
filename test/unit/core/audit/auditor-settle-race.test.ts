import { describe, expect, it } from 'vitest';
import { createAuditor } from '../../../../functions/core/audit/auditor.js';
import type { AuditPorts } from '../../../../functions/core/audit/ports.js';
import type { LedgerBlock } from '../../../../functions/core/publish/ports.js';

// The audit settles an old UNKNOWN that is not in the log as NOT_SENT. Between its read of the
// ledger and that write, a keyed retry may reopen the block (UNKNOWN again, its records on the
// way to the log): the settling must not land over it, or a retry that then cannot connect
// finds "not written" and says so while its earlier copy is in the log (chaos seed 109's shape).

const T0 = Date.UTC(2026, 11, 1);
const MINUTE = 60_000;
const STREAM = 'orders';

function auditWorld() {
  let now = T0;
  let versions = 0;
  const blocks = new Map<number, LedgerBlock>();
  const put = (block: LedgerBlock) => {
    const version = `v${++versions}`;
    blocks.set(block.firstSeq, { ...block, writtenAt: now, version });
    return version;
  };
  /** Runs while the audit reads the log: after its ledger read, before its writes. */
  let duringScan = () => {};
  const ports: AuditPorts = {
    clock: () => now,
    ledger: {
      forEachBlock: async (_stream, onBlock) => {
        for (const block of [...blocks.values()]) onBlock(block);
      },
      find: async (_stream, seq) =>
        [...blocks.values()].find((b) => seq >= b.firstSeq && seq < b.firstSeq + b.outcomes.length),
      write: async (block, _deadline, over) => {
        const there = blocks.get(block.firstSeq);
        if (over !== undefined && there?.version !== over) return undefined;
        return put(block);
      },
    },
    log: {
      scan: async (_topic, request) => {
        await request.after; // records come once the ledger is read, as from the Kafka scanner
        duringScan();
        return { scanned: 0, next: new Map([[0, 0]]), logStart: new Map([[0, 0]]), complete: true };
      },
    },
    receipts: { forEachBatch: async () => {}, counts: async () => [] },
    checkpoints: { load: async () => undefined, save: async () => {} },
  };
  const audit = () =>
    createAuditor(ports).run({
      topic: 'orders',
      groups: [],
      streams: [STREAM],
      scanDeadlineAt: now + MINUTE,
      horizonMs: 10 * MINUTE,
      bucketMs: 5 * MINUTE,
    });
  return {
    blocks,
    put,
    audit,
    advance: (ms: number) => {
      now += ms;
    },
    onScan: (f: () => void) => {
      duringScan = f;
    },
  };
}

const unknownBlock = (message: string): LedgerBlock => ({
  stream: STREAM,
  firstSeq: 1,
  topic: 'orders',
  session: 's1',
  idempotencyKey: 'k',
  outcomes: [
    { status: 'UNKNOWN', message },
    { status: 'UNKNOWN', message },
  ],
});

describe('audit: settling an UNKNOWN not in the log', () => {
  it('settles it NOT_SENT when nothing wrote the block since the audit read it', async () => {
    const world = auditWorld();
    world.put(unknownBlock('attempt 1 timed out'));
    world.advance(30 * MINUTE);
    const report = await world.audit();
    expect(report.settled).toMatchObject({ notWritten: 2 });
    expect(world.blocks.get(1)?.outcomes.map((o) => o.status)).toEqual(['NOT_SENT', 'NOT_SENT']);
  });

  it('leaves a block a retry reopened after the audit read it', async () => {
    const world = auditWorld();
    world.put(unknownBlock('attempt 1 timed out'));
    world.advance(30 * MINUTE);
    // The retry opens the block (UNKNOWN, its records in flight) while the audit reads the log.
    world.onScan(() => world.put(unknownBlock('attempt 2 sending')));
    const report = await world.audit();
    expect(report.settled).toMatchObject({ notWritten: 0 });
    const block = world.blocks.get(1);
    expect(block?.outcomes).toEqual([
      { status: 'UNKNOWN', message: 'attempt 2 sending' },
      { status: 'UNKNOWN', message: 'attempt 2 sending' },
    ]);
  });
});
