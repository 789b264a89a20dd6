import { describe, expect, it } from 'vitest';
import { runChaos } from '../chaos/run.js';

// Issue 16: a fixed-seed chaos run of 60 s on the replicated cluster (three brokers, RF 3,
// min.insync.replicas=2) of its own: three publishers through the real handlers, reconcile and
// audits running, the seed's faults (a leader killed mid-batch, a broker paused past the request
// timeout, two brokers down, the controller killed, a restart during an audit, a group member
// killed), then one audit after the faults and the independent checker (test/chaos/checker.ts).
//
// Nothing is tolerated. The same seq twice within one producer session (kafkajs 2.2.4's retry of
// a send spanning brokers re-sent batches a broker had already written, under new sequence
// numbers) is fixed: every kafkajs attempt goes to one broker (adapters/kafka/leader-guard.ts;
// replayed on purpose by test/integration/faults-leader-move.test.ts). So is the other bug this
// seed found (a keyed retry recording "not written" over an earlier UNKNOWN whose record landed,
// core/publish/send-step.ts). Either fails the run.

const SEED = 1;
// The idempotent workload only: `npm run chaos` runs the transactional one beside it (issue 33),
// whose two more publishers and read_committed reads would make this file, run by `npm test`
// beside two others on two cores, heavier than it is.

describe('chaos on a replicated cluster', () => {
  it(`seed ${SEED}, 60 s: nothing lost, every duplicate named, every UNKNOWN settled, no false REWIND or LOST, at most 5 % of seqs unused`, async () => {
    const lines: string[] = [];
    const result = await runChaos({
      seconds: 60,
      seed: SEED,
      publishers: 3,
      workloads: ['idempotent'],
      log: (line) => lines.push(line),
    });
    process.stderr.write(
      `${[...lines, ...result.known.map((k) => `KNOWN ${k}`), result.lastLine].join('\n')}\n`,
    );
    expect(result.failures, result.lastLine).toEqual([]);
    expect(result.ok).toBe(true);
    const { counts } = result;
    // The run did what it claims: faults came, records were acknowledged, duplicates explained.
    expect(counts.faults).toBeGreaterThanOrEqual(3);
    expect(counts.ACKED).toBeGreaterThan(100);
    expect(counts.lost).toBe(0);
    expect(counts.sameSession).toBe(0);
    expect(counts.UNKNOWN).toBe(0);
    expect(counts.explained).toBe(counts.duplicates);
    expect(counts.reconcileRuns).toBeGreaterThan(3);
    // Seqs that are used (issue 31): at most 5 % of those allocated left VOID (lease rests,
    // requests that gave up), counted by the checker from the ledger it reads itself.
    const unused = counts.VOID ?? 0;
    const allocated = counts.seqs ?? 0;
    expect(allocated).toBeGreaterThan(0);
    expect(unused / allocated, `${unused} of ${allocated} seqs unused`).toBeLessThanOrEqual(0.05);
  });
});
