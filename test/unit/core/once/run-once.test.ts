import { describe, expect, it } from 'vitest';
import {
  type DoneRange,
  foldDone,
  MAX_RANGES,
  rangesHave,
} from '../../../../functions/core/once/done-ranges.js';
import {
  compact,
  type LaneRanges,
  type MarkKey,
  type OnceOptions,
  type OnceRecord,
  type OnceStore,
  runOnce,
  SETTLE_MS,
  type StoredMark,
} from '../../../../functions/core/once/run-once.js';

/** An in-memory store with the adapter's conditions (single-item, conditional). */
function fakeStore() {
  const marks = new Map<string, StoredMark & { token?: string }>();
  const lanes = new Map<string, LaneRanges>();
  const id = (at: MarkKey) =>
    'seq' in at ? `${at.group}#${at.stream}#${at.seq}` : `${at.group}#key#${at.key}`;
  const under = <T>(map: Map<string, T>, prefix: string) =>
    [...map]
      .filter(([k]) => k.startsWith(prefix))
      .map(([k, v]) => [k.slice(prefix.length), v] as const);
  const store: OnceStore = {
    async read(group, stream) {
      return new Map(under(lanes, `${group}#${stream}#`));
    },
    async claim(at, { token, lane, expiresAt, now }) {
      const held = marks.get(id(at));
      if (held === undefined || (held.state === 'CLAIMED' && held.expiresAt < now)) {
        marks.set(id(at), { state: 'CLAIMED', lane, expiresAt, doneAt: 0, token });
        return 'claimed';
      }
      return held.state === 'DONE' ? 'done' : 'held';
    },
    async finish(at, token, now) {
      const held = marks.get(id(at));
      if (held?.token !== token) return false;
      marks.set(id(at), { ...held, state: 'DONE', doneAt: now });
      return true;
    },
    async release(at, token) {
      if (marks.get(id(at))?.token === token) marks.delete(id(at));
    },
    async marks(group, stream, { deadBefore, limit, skip }) {
      return under(marks, `${group}#${stream}#`)
        .map(([seq, mark]) => [Number(seq), mark] as const)
        .filter(([seq, m]) => (m.state === 'DONE' || m.expiresAt < deadBefore) && !skip(seq))
        .slice(0, limit);
    },
    async saveRanges(group, stream, lane, ranges, version) {
      const key = `${group}#${stream}#${lane}`;
      if ((lanes.get(key)?.version ?? 0) !== version) return false;
      lanes.set(key, { ...ranges, version: version + 1 });
      return true;
    },
    async dropMarks(group, stream, seqs) {
      for (const seq of seqs) marks.delete(`${group}#${stream}#${seq}`);
    },
  };
  return { store, marks, lanes };
}

const record = (lane: string, offset: number, seq?: number, stream = 'orders'): OnceRecord => ({
  id: `${lane}-${offset}`,
  lane,
  identity: seq === undefined ? undefined : { stream, seq },
});

function options(store: OnceStore, clock = { t: 1_000_000 }, group = 'billing'): OnceOptions {
  let n = 0;
  return {
    group,
    store,
    now: () => clock.t,
    newToken: () => `token-${++n}`,
    claimMs: 60_000,
    horizonMs: 30 * 86_400_000,
  };
}

describe('runOnce', () => {
  it('acts once per seq: a redelivered seq is suppressed, records without headers pass', async () => {
    const { store } = fakeStore();
    const acted: number[] = [];
    const act = async (r: OnceRecord) => {
      acted.push(r.identity?.seq ?? -1);
    };
    const batch = [record('t-0', 0, 1), record('t-0', 1, 2), record('t-0', 2)];
    const first = await runOnce(batch, act, options(store));
    expect(first.acted.map((r) => r.id)).toEqual(['t-0-0', 't-0-1']);
    expect(first.passed.map((r) => r.id)).toEqual(['t-0-2']);
    // The same seq again, at a later offset (a producer-side duplicate), and the batch again.
    const second = await runOnce([...batch, record('t-0', 3, 2)], act, options(store));
    expect(second.suppressed.map((r) => r.id)).toEqual(['t-0-0', 't-0-1', 't-0-3']);
    expect(second.passed.map((r) => r.id)).toEqual(['t-0-2']);
    expect(acted).toEqual([1, 2, -1, -1]);
  });

  it('on a failed act releases the claim and reports it and the rest of its partition failed', async () => {
    const { store, marks } = fakeStore();
    const acted: string[] = [];
    const act = async (r: OnceRecord) => {
      if (r.id === 't-0-1' && !acted.includes('crashed')) {
        acted.push('crashed');
        throw new Error('boom');
      }
      acted.push(r.id);
    };
    const batch = [
      record('t-0', 0, 1),
      record('t-0', 1, 2),
      record('t-0', 2, 3),
      record('t-1', 0, 4),
    ];
    const first = await runOnce(batch, act, options(store));
    expect(first.failed.map((r) => r.id)).toEqual(['t-0-1', 't-0-2']);
    expect(first.acted.map((r) => r.id)).toEqual(['t-0-0', 't-1-0']);
    expect([...marks.keys()].sort()).toEqual(['billing#orders#1', 'billing#orders#4']);
    // Lambda delivers the partition again from its lowest failed offset.
    const retry = await runOnce(batch.slice(1, 3), act, options(store));
    expect(retry.acted.map((r) => r.id)).toEqual(['t-0-1', 't-0-2']);
    expect(acted.filter((a) => a !== 'crashed').sort()).toEqual([
      't-0-0',
      't-0-1',
      't-0-2',
      't-1-0',
    ]);
  });

  it('waits for a live claim, takes over one whose holder died once it expires', async () => {
    const { store } = fakeStore();
    const clock = { t: 1_000_000 };
    // A holder that claimed seq 7 and died before marking it done.
    expect(
      await store.claim(
        { group: 'billing', stream: 'orders', seq: 7 },
        { token: 'dead', lane: 't-0', expiresAt: clock.t + 60_000, now: clock.t },
      ),
    ).toBe('claimed');
    const acted: string[] = [];
    const act = async (r: OnceRecord) => {
      acted.push(r.id);
    };
    const held = await runOnce(
      [record('t-0', 5, 7), record('t-0', 6, 8)],
      act,
      options(store, clock),
    );
    expect(held.failed.map((r) => r.id)).toEqual(['t-0-5', 't-0-6']);
    expect(acted).toEqual([]);
    clock.t += 60_001;
    const later = await runOnce(
      [record('t-0', 5, 7), record('t-0', 6, 8)],
      act,
      options(store, clock),
    );
    expect(later.acted.map((r) => r.id)).toEqual(['t-0-5', 't-0-6']);
  });

  it('keeps groups apart: each group acts once', async () => {
    const { store } = fakeStore();
    const acted: string[] = [];
    const batch = [record('t-0', 0, 1), record('t-0', 1, 2)];
    for (const group of ['billing', 'email', 'billing', 'email']) {
      await runOnce(
        batch,
        async (r) => void acted.push(`${group}:${r.id}`),
        options(store, { t: 1 }, group),
      );
    }
    expect(acted).toEqual(['billing:t-0-0', 'billing:t-0-1', 'email:t-0-0', 'email:t-0-1']);
  });

  it('deduplicates records without headers by a caller-derived key', async () => {
    const { store } = fakeStore();
    const acted: string[] = [];
    const keyed = (offset: number, key: string): OnceRecord => ({
      id: `t-0-${offset}`,
      lane: 't-0',
      identity: { key },
    });
    const outcome = await runOnce(
      [keyed(0, 'order-1'), keyed(1, 'order-2'), keyed(2, 'order-1')],
      async (r) => void acted.push(r.id),
      options(store),
    );
    expect(acted).toEqual(['t-0-0', 't-0-1']);
    expect(outcome.suppressed.map((r) => r.id)).toEqual(['t-0-2']);
  });

  it('counts an act whose claim expired and was taken over as an overrun', async () => {
    const { store } = fakeStore();
    const clock = { t: 1_000_000 };
    const outcome = await runOnce(
      [record('t-0', 0, 1)],
      async () => {
        clock.t += 60_001;
        await store.claim(
          { group: 'billing', stream: 'orders', seq: 1 },
          { token: 'other', lane: 't-0', expiresAt: clock.t + 60_000, now: clock.t },
        );
      },
      options(store, clock),
    );
    expect(outcome.overrun).toBe(1);
    expect(outcome.acted).toHaveLength(1);
  });
});

describe('done-marks as ranges', () => {
  const day = 86_400_000;

  it('merges contiguous seqs and bridges gaps done in other partitions', () => {
    const ranges = foldDone(
      [[1, 3, 10]],
      [
        [4, 20],
        [9, 30],
      ],
      { horizon: 0, doneElsewhere: (from, to) => from >= 5 && to <= 8 },
    );
    expect(ranges).toEqual([[1, 9, 30]]);
    expect(foldDone([[1, 3, 10]], [[5, 20]], { horizon: 0 })).toEqual([
      [1, 3, 10],
      [5, 5, 20],
    ]);
    expect(rangesHave(ranges, 9)).toBe(true);
    expect(rangesHave(ranges, 10)).toBe(false);
  });

  it('drops ranges past the horizon and keeps the newest MAX_RANGES', () => {
    expect(foldDone([[1, 3, 10]], [[9, 500]], { horizon: 100 })).toEqual([[9, 9, 500]]);
    const many: DoneRange[] = Array.from({ length: MAX_RANGES + 10 }, (_, i) => [i * 2, i * 2, i]);
    const kept = foldDone(many, [], { horizon: 0 });
    expect(kept).toHaveLength(MAX_RANGES);
    expect(kept[0]).toEqual([20, 20, 10]);
  });

  it('folds settled marks into ranges per partition and deletes them; the seqs stay done', async () => {
    const { store, marks, lanes } = fakeStore();
    const clock = { t: 1_000_000 };
    const batch = Array.from({ length: 50 }, (_, i) => record(`t-${i % 2}`, i, i + 1));
    await runOnce(batch, async () => {}, options(store, clock));
    expect(marks.size).toBe(50);
    // Folded first, the marks kept; deleted once the fold has settled.
    await compact('billing', 'orders', store, options(store, clock), clock.t);
    expect(marks.size).toBe(50);
    clock.t += SETTLE_MS + 1;
    await compact('billing', 'orders', store, options(store, clock), clock.t);
    expect(marks.size).toBe(0);
    // Seqs alternate partitions; each partition's range bridges the other's seqs.
    expect([...lanes.values()].map((l) => l.ranges.length)).toEqual([1, 1]);
    const again = await runOnce(
      batch,
      async () => {
        throw new Error('acted twice');
      },
      options(store, clock),
    );
    expect(again.suppressed).toHaveLength(50);
  });

  it('stays bounded at size: a million seqs over three months in 10 partitions', async () => {
    const { store, marks, lanes } = fakeStore();
    const clock = { t: 1_000_000 };
    const opts = { ...options(store, clock), horizonMs: 30 * day, perRun: 20_000 };
    let seq = 0;
    // 90 days; each day 11,111 seqs spread round-robin, with a hole every 997 seqs (a seq
    // no partition holds: never bridged) — the worst a stream gives ranges.
    for (let d = 0; d < 90; d++) {
      const done: number[] = [];
      for (let i = 0; i < 11_111; i++) {
        seq++;
        if (seq % 997 !== 0) done.push(seq);
      }
      for (const s of done)
        marks.set(`billing#orders#${s}`, {
          state: 'DONE',
          lane: `t-${s % 10}`,
          expiresAt: 0,
          doneAt: clock.t,
        });
      clock.t += day;
      // Folded, then (a compaction past SETTLE_MS later) the marks deleted.
      await compact('billing', 'orders', store, opts, clock.t);
      await compact('billing', 'orders', store, opts, clock.t + SETTLE_MS + 1);
      expect(marks.size).toBe(0);
    }
    expect(seq).toBeGreaterThan(999_000);
    let largest = 0;
    for (const { ranges, pending } of lanes.values())
      largest = Math.max(
        largest,
        JSON.stringify(ranges).length + JSON.stringify(pending).length + 100,
      );
    // Stated bound: under 180 KB per partition item whatever the traffic; here the horizon
    // (30 days of holes) keeps it far lower.
    expect(largest).toBeLessThan(180_000);
    expect(largest).toBeLessThan(20_000);
    const newest = [...lanes.values()].flatMap((l) => l.ranges);
    expect(Math.min(...newest.map((r) => r[2]))).toBeGreaterThanOrEqual(clock.t - 31 * day);
  }, 60_000);
});

describe('tallyOnceEach (consumers outside Lambda)', () => {
  it('acts once per seq on kafkajs-shaped records and says where each partition resumes', async () => {
    const { tallyOnceEach } = await import('../../../../functions/consumer/tally-once-each.js');
    const { store } = fakeStore();
    const message = (partition: number, offset: number, seq: number) => ({
      topic: 'orders',
      partition,
      offset: String(offset),
      headers: { 'tally.stream': Buffer.from('orders'), 'tally.seq': Buffer.from(String(seq)) },
    });
    const records = [message(0, 0, 1), message(0, 1, 2), message(0, 2, 3), message(1, 0, 4)];
    const acted: string[] = [];
    const first = await tallyOnceEach({ group: 'billing', store }, records, async (r) => {
      if (r.offset === '1' && !acted.includes('crash')) {
        acted.push('crash');
        throw new Error('boom');
      }
      acted.push(`${r.partition}/${r.offset}`);
    });
    expect(first.retryFrom).toEqual([{ topic: 'orders', partition: 0, offset: '1' }]);
    const again = await tallyOnceEach({ group: 'billing', store }, records, async (r) => {
      acted.push(`${r.partition}/${r.offset}`);
    });
    expect(again.suppressed.map((r) => r.offset)).toEqual(['0', '0']);
    expect(again.acted.map((r) => `${r.partition}/${r.offset}`)).toEqual(['0/1', '0/2']);
    // Partitions run side by side: each record once, whatever the interleaving.
    expect([...acted].sort()).toEqual(['0/0', '0/1', '0/2', '1/0', 'crash']);
  });
});
