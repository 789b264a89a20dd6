// Both workflows through the local Step Functions runner (with AWS's payload limits) on simulated
// clusters of growing size (test/helpers/simulated-cluster.ts: the reconcile core and the repair
// tasks for real over in-memory ports). Per size: the bytes each task returns now, the bytes
// Reconcile and PlanRepair returned before issue 13 (the whole report, the whole plan), whether
// offset-repair succeeded, and how long it took. Stops growing after a failure or a slow run.
//
//   node --import tsx bench/workflows.ts [--sizes 430,2000,20000,100000,200000]   (partitions)
import { performance } from 'node:perf_hooks';
import { summarizeReconcile } from '../functions/core/reconcile/summary.js';
import { restorePlan } from '../functions/reconciling/restore-actions.js';
import { payloadBytes, STATE_PAYLOAD_LIMIT } from '../infra/local/payload-limits.js';
import {
  createLocalStepFunctions,
  type LocalStepFunctions,
} from '../infra/local/step-functions.js';
import { REPAIRED, simulatedCluster, simulatedInvoke } from '../test/helpers/simulated-cluster.js';
import { markdownTable, note, parseSizes, smokeOr, writeResults } from './harness.js';

const SLOW_MS = 180_000;
const sizes = parseSizes(
  process.argv.slice(2),
  // BENCH_SMOKE=1: one cluster of 100 partitions.
  smokeOr([430, 2_000, 20_000, 100_000, 200_000], [100]),
  (n) => n >= 10,
);
const at = new Date().toISOString();

async function offsetRepair(partitions: number) {
  const groups = Math.max(2, Math.round(partitions / 10));
  // At most 200 topics (offset-repair audits at most 200 in one run): wider topics past 20,000.
  const partitionsPerTopic = Math.max(100, Math.ceil(partitions / 200));
  const cluster = simulatedCluster({ groups, partitions, partitionsPerTopic });
  await cluster.seedRewind();
  const report = await cluster.reconciler.run();
  const before = {
    reconcile: payloadBytes(report),
    planRepair: payloadBytes({ plan: await restorePlan(cluster.ports, REPAIRED) }),
  };
  const summary = payloadBytes(summarizeReconcile(report, 'tally-reconcile-reports'));
  let sfn: LocalStepFunctions | undefined;
  const sim = simulatedInvoke(cluster, () => sfn as LocalStepFunctions);
  sfn = createLocalStepFunctions({ invoke: sim.invoke, retryIntervalMs: 0, waitMs: 0 });
  const t = performance.now();
  const execution = sfn.start('offset-repair', { group: REPAIRED });
  const done = await sfn.settled('offset-repair', execution.name, 30 * 60_000);
  const ms = Math.round(performance.now() - t);
  return {
    partitions,
    groups,
    groupPartitions: groups - 1 + partitions,
    status: done.status,
    error: done.error,
    ms,
    before,
    after: { ...sim.outputs, reconcileSummaryAlone: summary } as Record<string, number>,
  };
}

async function publishAndVerify() {
  const records = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      idempotencyKey: `order-${i}`,
      value: { type: 'JSON', data: i },
    }));
  let n = 1000;
  while (payloadBytes({ topic: 'orders', records: records(n + 1) }) <= STATE_PAYLOAD_LIMIT) n++;
  let sfn: LocalStepFunctions | undefined;
  const sim = simulatedInvoke(simulatedCluster({ groups: 1, partitions: 1 }), () => sfn as never);
  sfn = createLocalStepFunctions({ invoke: sim.invoke, waitMs: 0 });
  const t = performance.now();
  const execution = sfn.start('publish-and-verify', { topic: 'orders', records: records(n) });
  const done = await sfn.settled('publish-and-verify', execution.name, 30 * 60_000);
  return {
    records: n,
    status: done.status,
    error: done.error,
    ms: Math.round(performance.now() - t),
    after: sim.outputs,
  };
}

const runs: Awaited<ReturnType<typeof offsetRepair>>[] = [];
let stoppedBy: string | undefined;
for (const partitions of sizes) {
  note(`offset-repair on ${partitions.toLocaleString('en')} partitions…`);
  try {
    const run = await offsetRepair(partitions);
    runs.push(run);
    note(`  ${run.status} in ${run.ms} ms; results ${JSON.stringify(run.after)}`);
    if (run.status !== 'SUCCEEDED' || run.ms > SLOW_MS) break;
  } catch (error) {
    // The simulation itself (the reconcile core over in-memory ports) gave out at this size.
    stoppedBy = `${partitions.toLocaleString('en')} partitions: ${String(error)}`;
    note(`  stopped: ${stoppedBy}`);
    break;
  }
}
note('publish-and-verify with as many records as its input holds…');
const publish = await publishAndVerify();

const kb = (n: number | undefined) =>
  n === undefined ? '–' : `${(n / 1024).toLocaleString('en', { maximumFractionDigits: 1 })} KiB`;
const table = [
  markdownTable(
    [
      'partitions (groups)',
      'offset-repair',
      'time',
      'Reconcile before → now',
      'PlanRepair before → now',
      'ExecuteRestore now',
    ],
    runs.map((r) => [
      `${r.partitions.toLocaleString('en')} (${r.groups.toLocaleString('en')})`,
      r.status + (r.error ? ` ${r.error}` : ''),
      `${(r.ms / 1000).toFixed(1)} s`,
      `${kb(r.before.reconcile)} → ${kb(r.after.reconcile)}`,
      `${kb(r.before.planRepair)} → ${kb(r.after.planRepair)}`,
      kb(r.after.executeRepair),
    ]),
  ),
  ...(stoppedBy ? [`Stopped at ${stoppedBy}`] : []),
  `Task results over ${kb(STATE_PAYLOAD_LIMIT)} fail a state in AWS (States.DataLimitExceeded). publish-and-verify, ${publish.records.toLocaleString('en')} records (its input at the limit): ${publish.status} in ${(publish.ms / 1000).toFixed(1)} s, results ${JSON.stringify(publish.after)} bytes.`,
].join('\n\n');
const largest = runs.filter((r) => r.status === 'SUCCEEDED').at(-1);
const summary = {
  at,
  largestClusterHandled: largest && { partitions: largest.partitions, groups: largest.groups },
  stoppedBy,
  offsetRepair: runs,
  publishAndVerify: publish,
};
writeResults('workflows', summary, table, !process.argv.includes('--sizes'));
process.exit(0);
