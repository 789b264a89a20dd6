import { beforeAll, describe, expect, it } from 'vitest';
import {
  LAMBDA_RESPONSE_LIMIT,
  payloadBytes as payloadSize,
  STATE_PAYLOAD_LIMIT,
} from '../../infra/local/payload-limits.js';
import {
  createLocalStepFunctions,
  type Execution,
  type LocalStepFunctions,
} from '../../infra/local/step-functions.js';
import {
  type OldShapes,
  REPAIRED,
  type SimulatedCluster,
  simulatedCluster,
  simulatedInvoke,
} from '../helpers/simulated-cluster.js';

// Both state machines of infra/state-machines/, through the local runner with AWS's payload
// limits, on a simulated cluster of 2,000 groups and 20,000 partitions (issue 13: offset-repair
// failed past ~430 partitions in AWS and passed locally). Each case also runs the tasks as they
// answered before (the whole report, plan or record): that execution fails with
// States.DataLimitExceeded, as it did in AWS.

const SIZE = { groups: 2_000, partitions: 20_000 };

/** An offset-repair of REPAIRED; on `cluster` as it stands, or on a new one of `size`. */
async function repair(old: OldShapes = {}, size = SIZE, seeded?: SimulatedCluster) {
  const cluster = seeded ?? simulatedCluster(size);
  if (!seeded) await cluster.seedRewind();
  let sfn: LocalStepFunctions | undefined;
  const sim = simulatedInvoke(cluster, () => sfn as LocalStepFunctions, old);
  sfn = createLocalStepFunctions({ invoke: sim.invoke, retryIntervalMs: 0, waitMs: 0 });
  const execution = sfn.start('offset-repair', { group: REPAIRED });
  return { cluster, sim, done: await sfn.settled('offset-repair', execution.name, 60_000) };
}

const failedState = (done: Execution) =>
  done.history.find((e) => e.type === 'StateFailed' && e.error === 'States.DataLimitExceeded')
    ?.state;

describe(`offset-repair at ${SIZE.groups.toLocaleString('en')} groups × ${SIZE.partitions.toLocaleString('en')} partitions`, () => {
  let run: Awaited<ReturnType<typeof repair>>;
  beforeAll(async () => {
    run = await repair();
  });

  it('succeeds, restoring exactly the approved plan, every task result a small summary', () => {
    const { done, sim, cluster } = run;
    expect(done.status, `${done.error}: ${done.cause}`).toBe('SUCCEEDED');
    const [approval] = sim.approvals as Array<{ subject: Record<string, unknown> }>;
    const output = done.output as { restored: Record<string, unknown>; audits: unknown[] };
    expect(approval?.subject).toMatchObject({ group: REPAIRED, partitions: SIZE.partitions });
    expect(output.restored).toMatchObject({
      group: REPAIRED,
      planId: approval?.subject.planId,
      digest: approval?.subject.digest,
      partitions: SIZE.partitions,
    });
    expect(cluster.set).toEqual([{ group: REPAIRED, offsets: SIZE.partitions }]);
    expect(output.audits).toHaveLength(SIZE.partitions / 100);
    for (const [fn, bytes] of Object.entries(sim.outputs)) {
      expect(bytes, `${fn} returned ${bytes} bytes`).toBeLessThan(32 * 1024);
    }
    process.stderr.write(
      `offset-repair at size: task result bytes ${JSON.stringify(sim.outputs)}\n`,
    );
  });

  it('with Reconcile returning the whole report (before issue 13), fails past ~430 partitions', async () => {
    // 2 groups on 500 partitions: a report of ~600 KB, over Step Functions' 256 KiB.
    const { done } = await repair({ reconcile: true }, { groups: 2, partitions: 500 });
    expect(done.status).toBe('FAILED');
    expect(failedState(done)).toBe('Reconcile');
    // At full size the report (~24 MB) is over Lambda's 6 MB response even before that.
    expect(payloadSize(await run.cluster.reconciler.run())).toBeGreaterThan(LAMBDA_RESPONSE_LIMIT);
  });

  it('with PlanRepair returning the whole plan (before issue 13), fails with States.DataLimitExceeded', async () => {
    // The same cluster, still rewound (the simulation's restore sets nothing).
    const { done } = await repair({ planRepair: true }, SIZE, run.cluster);
    expect(done.error).toBe('States.DataLimitExceeded');
    expect(failedState(done)).toBe('PlanRepair');
  });
});

describe('publish-and-verify with as many records as its input holds', () => {
  const records = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      idempotencyKey: `order-${i}`,
      value: { type: 'JSON', data: i },
    }));
  const inputBytes = (n: number) => JSON.stringify({ topic: 'orders', records: records(n) }).length;
  let most: number | undefined;
  /**
   * The most records whose input fits in the limit (each record ~55 bytes): the input grows with
   * every record, so a binary search finds it (once: it was seconds of CPU counted one by one).
   */
  const fitting = () => {
    if (most !== undefined) return most;
    let fits = 1000;
    let over = 10_000;
    if (inputBytes(fits) > STATE_PAYLOAD_LIMIT || inputBytes(over) <= STATE_PAYLOAD_LIMIT)
      throw new Error('the search bounds are wrong for this limit');
    while (over - fits > 1) {
      const middle = Math.floor((fits + over) / 2);
      if (inputBytes(middle) <= STATE_PAYLOAD_LIMIT) fits = middle;
      else over = middle;
    }
    most = fits;
    return fits;
  };

  async function publish(old: OldShapes = {}, n = fitting()) {
    const cluster = simulatedCluster({ groups: 1, partitions: 1 });
    const sim = simulatedInvoke(cluster, () => sfn, old);
    const sfn = createLocalStepFunctions({ invoke: sim.invoke, waitMs: 0 });
    const input = { topic: 'orders', records: records(n) };
    const execution = sfn.start('publish-and-verify', input);
    return { sim, done: await sfn.settled('publish-and-verify', execution.name, 60_000) };
  }

  it('succeeds: the gathered publish results stay within the size of the input', async () => {
    const { done } = await publish();
    expect(done.status, `${done.error}: ${done.cause}`).toBe('SUCCEEDED');
    expect(done.output).toMatchObject({ verified: { verified: fitting() } });
  });

  it('with each publish returning its whole report (before issue 13), fails with States.DataLimitExceeded', async () => {
    // 1,000 records of ~360 bytes of report each: over the limit long before the input is.
    const { done } = await publish({ publishRecord: true }, 1000);
    expect(done.error).toBe('States.DataLimitExceeded');
  });
});
