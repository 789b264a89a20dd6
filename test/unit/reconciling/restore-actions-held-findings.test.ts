import { describe, expect, it } from 'vitest';
import { acknowledgeGroup, historyEntries } from '../../../functions/core/reconcile/history.js';
import type { PartitionReport } from '../../../functions/core/reconcile/ports.js';
import { planRestore } from '../../../functions/core/reconcile/restore-plan.js';
import { acknowledgeFindings } from '../../../functions/reconciling/restore-actions.js';
import { FakeCluster } from '../../helpers/fake-cluster.js';
import { memoryReconciler } from '../../helpers/reconcile-stores.js';

// LOST and OUT_OF_RANGE stay until the group commits inside the log again, a restore does, or
// an admin acknowledges them (core/reconcile/offsets/judge-held.ts), through the reconciler with stores that
// keep what the DynamoDB adapter would (history-codec.ts).

const MINUTE = 60_000;
const T0 = Date.parse('2026-03-01T00:00:00Z');
const WINDOW = 5;

function setup() {
  const cluster = new FakeCluster();
  cluster.topics.set('t', [
    { logStart: 0, logEnd: 100 },
    { logStart: 0, logEnd: 100 },
  ]);
  cluster.groups.set('g', {
    state: 'Empty',
    members: [],
    commits: new Map([
      ['t#0', 100],
      ['t#1', 100],
    ]),
  });
  let now = T0;
  const { reconciler, history } = memoryReconciler(cluster, () => now, {
    windowSize: WINDOW,
    graceMs: 0,
    retentionMs: 14 * 1440 * MINUTE,
    pruneBudget: 100,
  });
  const run = async (at: number): Promise<PartitionReport | undefined> => {
    now = at;
    const report = await reconciler.run();
    return report.groups.find((g) => g.group === 'g')?.partitions.find((p) => p.partition === 0);
  };
  const log = cluster.topics.get('t')?.[0] ?? { logStart: 0, logEnd: 0 };
  const commits = cluster.groups.get('g')?.commits ?? new Map<string, number>();
  return { history, run, log, commits };
}

describe('held findings', () => {
  it('OUT_OF_RANGE stays while the commit is below the log start, released by a commit inside', async () => {
    const { run, log, commits } = setup();
    await run(T0);
    log.logStart = 150; // retention deleted what the group had not read
    log.logEnd = 200;
    for (let i = 1; i <= 3 * WINDOW; i++) {
      log.logEnd += 10;
      expect(await run(T0 + i * MINUTE)).toMatchObject({
        status: 'OUT_OF_RANGE',
        outOfRange: { side: 'BELOW_LOG_START', records: 50 },
      });
    }
    commits.set('t#0', 160);
    expect((await run(T0 + 20 * MINUTE))?.status).not.toBe('OUT_OF_RANGE');
  });

  it('LOST after OUT_OF_RANGE measures from the last commit that was inside the log', async () => {
    const { run, log, commits } = setup();
    await run(T0);
    log.logStart = 150;
    log.logEnd = 200;
    await run(T0 + MINUTE);
    commits.delete('t#0');
    for (let i = 2; i <= 4 * WINDOW; i++) {
      log.logEnd += 10;
      const p = await run(T0 + i * MINUTE);
      expect(p).toMatchObject({ status: 'LOST', lost: { lastGoodOffset: 100 } });
      expect(p?.currentLag).toBe(log.logEnd - 100);
    }
  });

  it('an acknowledged LOST reads OK until the group commits again, and a new finding is held anew', async () => {
    const { history, run, log, commits } = setup();
    await run(T0);
    commits.delete('t#0');
    for (let i = 1; i <= 2 * WINDOW; i++) {
      log.logEnd += 10;
      expect((await run(T0 + i * MINUTE))?.status).toBe('LOST');
    }
    const acknowledged = await acknowledgeFindings({ history }, 'g', T0 + 11 * MINUTE);
    expect(acknowledged).toEqual([{ topic: 't', partition: 0, status: 'LOST', committed: null }]);
    for (let i = 12; i <= 12 + 2 * WINDOW; i++) {
      log.logEnd += 10;
      expect(await run(T0 + i * MINUTE)).toMatchObject({ status: 'OK', currentLag: null });
    }
    // Nothing held any more: a second acknowledgement has nothing to do.
    expect(acknowledgeGroup(await history.loadAll(), 'g', T0).acknowledged).toEqual([]);
    // The group commits out of range: a new finding, held again.
    commits.set('t#0', log.logEnd + 50);
    expect((await run(T0 + 30 * MINUTE))?.status).toBe('OUT_OF_RANGE');
    log.logEnd += 10;
    expect((await run(T0 + 31 * MINUTE))?.status).toBe('OUT_OF_RANGE');
  });

  it('the restore plan keeps the last good offset however many runs pass', async () => {
    const { history, run, log, commits } = setup();
    await run(T0);
    commits.delete('t#0');
    for (let i = 1; i <= 20; i++) {
      log.logEnd += 7;
      await run(T0 + i * MINUTE);
    }
    const entries = historyEntries(await history.loadAll());
    const window = entries.find((e) => e.key === 't#0')?.window ?? [];
    // The window's own readings are all past the lost commit; the held good reading leads it.
    expect(window.slice(1).map((o) => o.committed)).toEqual([null, null, null, null, null]);
    expect(window[0]?.committed).toBe(100);
    const plan = planRestore('g', entries);
    expect(plan.partitions).toEqual([
      expect.objectContaining({ topic: 't', partition: 0, current: null, target: 100 }),
    ]);
    // The restore commits the target inside the log: released on the next run.
    commits.set('t#0', 100);
    expect(await run(T0 + 21 * MINUTE)).toMatchObject({
      status: expect.not.stringMatching(/LOST/),
    });
  });
});
