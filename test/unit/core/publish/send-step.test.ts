import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { LostKeyRace } from '../../../../functions/core/publish/key-rules.js';
import type { PlannedRecord } from '../../../../functions/core/publish/plan.js';
import type {
  Ledger,
  LedgerBlock,
  LedgerVersion,
  OutgoingRecord,
  PublishRequest,
  RecordSender,
} from '../../../../functions/core/publish/ports.js';
import type { RecordInput } from '../../../../functions/core/publish/record.js';
import { createSendStep, voidedError } from '../../../../functions/core/publish/send-step.js';
import { Deadline } from '../../../../functions/core/shared/deadline.js';
import {
  ConflictError,
  DependencyUnavailableError,
  UnprocessableInputError,
} from '../../../../functions/core/shared/errors.js';
import type { RecordOutcome } from '../../../../functions/core/shared/outcomes.js';

// One send of a request's planned records: the ledger block opened first or not (ledgerFirst),
// the send, and the outcome write, with its warnings returned.

const acked = (offset: number): RecordOutcome => ({
  status: 'ACKED',
  partition: 0,
  offset: String(offset),
});
const refused: RecordOutcome = {
  status: 'FAILED',
  kafkaError: 'INVALID_RECORD',
  message: 'broker refused it',
};

const input = (value: string): RecordInput => ({
  partition: undefined,
  key: undefined,
  value: { type: 'STRING', bytes: Buffer.from(value) },
  headers: [],
  timestamp: undefined,
});

const request = (idempotencyKey?: string): PublishRequest => ({
  topic: 'orders',
  stream: 'orders',
  idempotencyKey,
  records: [],
  deadline: new Deadline(Date.now() + 10_000),
  now: Date.now(),
});

const planned = (seq: number, over: Partial<PlannedRecord> = {}): PlannedRecord => ({
  input: input(`v${seq}`),
  seq,
  partition: 0,
  timestamp: 1_700_000_000_000,
  kept: undefined,
  ...over,
});

type Call =
  | { op: 'open'; block: LedgerBlock }
  | { op: 'send'; records: readonly OutgoingRecord[]; deadline: Deadline }
  | { op: 'write'; block: LedgerBlock; over: LedgerVersion | undefined }
  | { op: 'void'; block: LedgerBlock }
  | { op: 'claim' };

function fakes(options: {
  outcomes?: (records: readonly OutgoingRecord[]) => RecordOutcome[];
  open?: () => Promise<{ version: string } | 'voided'>;
  write?: () => Promise<string | undefined>;
}) {
  const calls: Call[] = [];
  const unused = () => {
    throw new Error('not used by the send step');
  };
  const sender: RecordSender = {
    async session() {
      return 'session-1';
    },
    async send(_topic, records, deadline) {
      calls.push({ op: 'send', records, deadline });
      return {
        session: 'session-1',
        outcomes: options.outcomes?.(records) ?? records.map((_, i) => acked(100 + i)),
      };
    },
  };
  const ledger: Ledger = {
    async open(block) {
      calls.push({ op: 'open', block });
      return (await options.open?.()) ?? { version: 'v1' };
    },
    async write(block, _deadline, over) {
      calls.push({ op: 'write', block, over });
      return options.write ? options.write() : 'v2';
    },
    async void(block) {
      calls.push({ op: 'void', block });
      return block.outcomes.length;
    },
    fill: unused,
    find: unused,
    forEachBlock: unused,
  };
  return { calls, step: createSendStep({ sender, ledger }) };
}

describe('sendAndRecord, ledger first', () => {
  it('opens the block UNKNOWN, sends, then writes the outcomes over the version it opened', async () => {
    const { calls, step } = fakes({});
    const { final, recorded } = await step.sendAndRecord({
      request: request(),
      firstSeq: 7,
      planned: [planned(7), planned(8)],
      ledgerFirst: true,
    });
    expect(final).toEqual([acked(100), acked(101)]);
    expect(await recorded).toEqual([]);
    expect(calls.map((c) => c.op)).toEqual(['open', 'send', 'write']);
    const [open, send, write] = calls as [
      Extract<Call, { op: 'open' }>,
      Extract<Call, { op: 'send' }>,
      Extract<Call, { op: 'write' }>,
    ];
    expect(open.block).toMatchObject({ stream: 'orders', firstSeq: 7, session: 'session-1' });
    expect(open.block.outcomes.map((o) => o.status)).toEqual(['UNKNOWN', 'UNKNOWN']);
    expect(send.records.map((r) => r.headers['tally.seq']?.toString())).toEqual(['7', '8']);
    expect(write.block.outcomes).toEqual(final);
    expect(write.over).toBe('v1');
  });

  it('sends nothing over seqs the audit voided, and says so', async () => {
    const { calls, step } = fakes({ open: async () => 'voided' });
    const sending = step.sendAndRecord({
      request: request(),
      firstSeq: 7,
      planned: [planned(7)],
      ledgerFirst: true,
    });
    await expect(sending).rejects.toBeInstanceOf(DependencyUnavailableError);
    expect(calls.map((c) => c.op)).toEqual(['open']);
  });

  it('records a keyless request VOID when its block could not be opened, and sends nothing', async () => {
    const down = new DependencyUnavailableError('DynamoDB timed out');
    const { calls, step } = fakes({
      open: async () => {
        throw down;
      },
    });
    const sending = step.sendAndRecord({
      request: request(),
      firstSeq: 7,
      planned: [planned(7)],
      ledgerFirst: true,
    });
    await expect(sending).rejects.toBe(down);
    expect(calls.map((c) => c.op)).toEqual(['open', 'void']);
    const voided = calls[1] as Extract<Call, { op: 'void' }>;
    expect(voided.block.outcomes.map((o) => o.status)).toEqual(['VOID']);
  });
});

describe('sendAndRecord, fast path', () => {
  it("writes nothing before the send: the outcomes are the block's first write", async () => {
    const { calls, step } = fakes({});
    const { recorded } = await step.sendAndRecord({
      request: request(),
      firstSeq: 1,
      planned: [planned(1)],
      ledgerFirst: false,
    });
    expect(await recorded).toEqual([]);
    expect(calls.map((c) => c.op)).toEqual(['send', 'write']);
    expect((calls[1] as Extract<Call, { op: 'write' }>).over).toBe('absent');
  });

  it('keeps back time for the outcome write that grows with the records (a fifth of what is left at most)', async () => {
    const keptBack = async (records: number, remainingMs: number) => {
      const { calls, step } = fakes({});
      const at = Date.now() + remainingMs;
      const { recorded } = await step.sendAndRecord({
        request: { ...request(), deadline: new Deadline(at) },
        firstSeq: 1,
        planned: Array.from({ length: records }, (_, i) => planned(i + 1)),
        ledgerFirst: false,
      });
      await recorded;
      const send = calls.find((c) => c.op === 'send') as Extract<Call, { op: 'send' }>;
      return at - send.deadline.at;
    };
    // 250 ms and 0.1 ms a record; the clock moves a little between the request and the send.
    const one = await keptBack(1, 8_000);
    expect(one).toBeGreaterThanOrEqual(240);
    expect(one).toBeLessThanOrEqual(251);
    const many = await keptBack(5_000, 8_000);
    expect(many).toBeGreaterThanOrEqual(740);
    expect(many).toBeLessThanOrEqual(751);
    // A short deadline: a fifth of it, so the send still has most of it.
    const short = await keptBack(5_000, 1_000);
    expect(short).toBeGreaterThanOrEqual(150);
    expect(short).toBeLessThanOrEqual(201);
  });

  it('runs the key claim before the send, and hands the seqs back when another request won the key', async () => {
    const { calls, step } = fakes({});
    let givenBack = 0;
    const lost = new ConflictError('Idempotency-Key: in progress');
    const claim = async () => {
      calls.push({ op: 'claim' });
      throw new LostKeyRace(lost, () => givenBack++);
    };
    const sending = step.sendAndRecord({
      request: request('k1'),
      firstSeq: 1,
      planned: [planned(1)],
      claim,
      ledgerFirst: false,
    });
    await expect(sending).rejects.toBe(lost);
    expect(givenBack).toBe(1);
    expect(calls.map((c) => c.op)).toEqual(['claim']);
  });
});

describe('sendAndRecord: what a retry keeps, and the warnings of the outcome write', () => {
  it('sends only what was not kept, and keeps an earlier UNKNOWN unless the resend is ACKED', async () => {
    const unknown: RecordOutcome = { status: 'UNKNOWN', message: 'no answer in time' };
    const { calls, step } = fakes({ outcomes: (records) => records.map(() => refused) });
    const { final } = await step.sendAndRecord({
      request: request('k1'),
      firstSeq: 1,
      planned: [planned(1, { kept: acked(5) }), planned(2, { mayHaveLanded: unknown }), planned(3)],
      ledgerFirst: true,
    });
    const send = calls.find((c) => c.op === 'send') as Extract<Call, { op: 'send' }>;
    expect(send.records.map((r) => r.headers['tally.seq']?.toString())).toEqual(['2', '3']);
    expect(final[0]).toEqual(acked(5));
    expect(final[1]).toMatchObject({ status: 'UNKNOWN' });
    expect((final[1] as { message: string }).message).toContain('no answer in time');
    expect(final[2]).toEqual(refused);
  });

  it('returns a warning when a later attempt or the audit wrote the block first', async () => {
    const { step } = fakes({ write: async () => undefined });
    const { recorded } = await step.sendAndRecord({
      request: request(),
      firstSeq: 1,
      planned: [planned(1)],
      ledgerFirst: true,
    });
    expect(await recorded).toEqual([
      'outcomes not recorded in the ledger: a later attempt or the audit wrote the block since this request opened it',
    ]);
  });

  it('returns a warning naming what the ledger still says when the write failed', async () => {
    const failing = async () => {
      throw new Error('timed out');
    };
    const opened = fakes({ write: failing });
    const first = await opened.step.sendAndRecord({
      request: request(),
      firstSeq: 1,
      planned: [planned(1)],
      ledgerFirst: true,
    });
    expect(await first.recorded).toEqual([
      'outcomes not recorded in the ledger (it says UNKNOWN unless this write lands late, and the audit settles it from the log): Error: timed out',
    ]);
    const fast = fakes({ write: failing });
    const second = await fast.step.sendAndRecord({
      request: request(),
      firstSeq: 1,
      planned: [planned(1)],
      ledgerFirst: false,
    });
    expect(await second.recorded).toEqual([
      'outcomes not recorded in the ledger (no block holds these seqs yet: the audit places them from the log, or records them VOID): Error: timed out',
    ]);
  });
});

describe('voidedError', () => {
  it('asks a keyless request to retry (503) and a keyed one to use a new key (422)', () => {
    const keyless = voidedError(request(), 4);
    expect(keyless).toBeInstanceOf(DependencyUnavailableError);
    expect(keyless.message).toContain('seqs from 4 of stream orders were voided by the audit');
    const keyed = voidedError(request('k1'), 4);
    expect(keyed).toBeInstanceOf(UnprocessableInputError);
    expect(keyed).toMatchObject({ field: 'Idempotency-Key' });
    expect(keyed.message).toContain('retry with a new key');
  });
});
