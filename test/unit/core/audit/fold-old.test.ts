import { describe, expect, it } from 'vitest';
import { foldOld, saveBounded } from '../../../../functions/core/audit/fold-old.js';
import { CheckpointTooLargeError } from '../../../../functions/core/audit/retention.js';
import { StreamAudit } from '../../../../functions/core/audit/stream-audit.js';
import { type CheckpointJson, TopicLog } from '../../../../functions/core/audit/topic-log.js';
import type { LedgerBlock } from '../../../../functions/core/publish/ports.js';

const MINUTE = 60_000;
const T0 = Date.parse('2026-11-29T10:00:00Z');

/** A topic with one stream: seqs 1..3 produced and read at T0, 4..5 a minute later. */
function setup() {
  const state = new TopicLog('t');
  const log = state.stream('s');
  const audit = new StreamAudit('s', log, { bucketMs: MINUTE, judgeBefore: T0 + 10 * MINUTE });
  // The ledger's time places produced seqs in buckets: seqs 1..3 at T0, 4..5 a minute later.
  const block = (firstSeq: number, count: number, writtenAt: number): LedgerBlock => ({
    stream: 's',
    firstSeq,
    topic: 't',
    session: 'p-1',
    idempotencyKey: undefined,
    writtenAt,
    outcomes: Array.from({ length: count }, (_, i) => ({
      status: 'ACKED',
      partition: 0,
      offset: String(firstSeq + i - 1),
    })),
  });
  audit.addLedgerBlock(block(1, 3, T0));
  audit.addLedgerBlock(block(4, 2, T0 + MINUTE));
  for (let seq = 1; seq <= 5; seq++) {
    const timestamp = seq <= 3 ? T0 : T0 + MINUTE;
    log.add({ seq, partition: 0, offset: seq - 1, session: 'p-1', timestamp }, MINUTE, false);
    state.countInBucket(timestamp, MINUTE);
  }
  return { state, log, audits: new Map([['s', audit]]) };
}

describe('foldOld', () => {
  it("folds the topic's buckets that ended by the cutoff into one older count", () => {
    const { state, audits } = setup();
    foldOld(state, audits, { cutoff: T0 + MINUTE, bucketMs: MINUTE, complete: true });
    expect([...state.topicBuckets]).toEqual([[T0 + MINUTE, 2]]);
    expect(state.olderInLog).toBe(3);
    expect(state.foldedBefore).toBe(T0 + MINUTE);
  });

  it("moves the stream's seqs produced in the folded buckets under its floor", () => {
    const { state, log, audits } = setup();
    foldOld(state, audits, { cutoff: T0 + MINUTE, bucketMs: MINUTE, complete: true });
    expect(log.floor).toBe(3);
  });

  it('folds nothing of a run that did not read the log to its end (absence is not final)', () => {
    const { state, log, audits } = setup();
    foldOld(state, audits, { cutoff: T0 + MINUTE, bucketMs: MINUTE, complete: false });
    expect(state.topicBuckets.size).toBe(2);
    expect(state.olderInLog).toBe(0);
    expect(log.floor).toBe(0);
  });
});

describe('saveBounded', () => {
  it('saves the checkpoint as it is when it fits', async () => {
    const { state, audits } = setup();
    const saved: CheckpointJson[] = [];
    const why = await saveBounded(
      async (json) => {
        saved.push(json);
      },
      state,
      audits,
      { bucketMs: MINUTE, complete: true },
    );
    expect(why).toBeUndefined();
    expect(saved).toEqual([state.toJSON()]);
    expect(state.topicBuckets.size).toBe(2);
  });

  it('folds every detail and saves again when the store finds it too large, and says why', async () => {
    const { state, log, audits } = setup();
    const saved: CheckpointJson[] = [];
    const tooLarge = new CheckpointTooLargeError('t', 500_000, 400_000);
    const why = await saveBounded(
      async (json) => {
        saved.push(json);
        if (saved.length === 1) throw tooLarge;
      },
      state,
      audits,
      { bucketMs: MINUTE, complete: true },
    );
    expect(why).toBe(
      `${tooLarge.message}: every detail read so far was folded into totals to save it`,
    );
    expect(saved).toHaveLength(2);
    expect(saved[1]?.topicBuckets).toEqual([]);
    expect(saved[1]?.olderInLog).toBe(5);
    expect(log.floor).toBe(5);
  });

  it('passes on any other failure of the save', async () => {
    const { state, audits } = setup();
    const failure = new Error('DynamoDB unavailable');
    await expect(
      saveBounded(
        async () => {
          throw failure;
        },
        state,
        audits,
        { bucketMs: MINUTE, complete: true },
      ),
    ).rejects.toBe(failure);
  });
});
