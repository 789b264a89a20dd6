import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// What the functions log goes to test/.logs/<path under test/>.log, shown under a failing test.
const setupFiles = ['test/helpers/quiet-logs.ts'];

/**
 * Files that run long, longest or best paired first: in a group, the first files start together
 * (one per worker) and each next one takes the first free worker, so a long file started last
 * would leave the other workers idle at the end. Everything else follows in Vitest's own order (cached
 * durations, else larger files first). The longest files are named after each run (the summary
 * reporter's last lines): keep this list in step with them.
 */
const FIRST = [
  // Start together (three integration workers): the chaos run's three brokers and publishers
  // (CPU-heavy, ~60 s plus its setup, a DynamoDB emulator of its own) beside the local-schedule
  // test (a real one-minute schedule, ~115 s for 10 s of CPU) and the 1,000 concurrent requests,
  // which must drain through the shared DynamoDB emulator within a request's deadline: started
  // later, it failed in two of three runs, both times beside fuzz-tasks on that emulator.
  'test/integration/chaos-cluster.test.ts',
  'test/integration/reconcile-local-schedule.test.ts',
  'test/integration/publish-concurrency.test.ts',
  // The once guard's redeliveries (~25 s, 4 s of CPU); the lifecycle test's stacks follow.
  'test/integration/once.test.ts',
  // Both packages packed and installed by npm while `npm start` starts (its serverless-offline
  // bundles every function), then three programs and the README examples on it (39 s alone
  // when it served the handlers in-process; 300 s alone on npm start at load 30, most of it
  // serverless-offline's bundling).
  'test/integration/packages-installed.test.ts',
  // Months on an injected clock: about 100 s of one core, the unit group's longest.
  'test/simulation/core-audit-horizon.test.ts',
  // Three stacks started and stopped one after the other (~100 s, a third of it CPU).
  'test/integration/local-stack-lifecycle.test.ts',
  'test/integration/reconcile-burrow-scenarios.test.ts',
  'test/integration/faults-broker-restart.test.ts',
  'test/integration/fuzz-http.test.ts',
  // A three-node cluster of its own and six transaction failure cases (~120 s alone, CPU-heavy).
  'test/integration/txn-faults.test.ts',
  'test/integration/serverless-package.test.ts',
  // A stack of its own (npm start's code) running every runnable example of the docs (~70 s).
  'test/integration/docs-examples.test.ts',
  // Packages the service four times and runs cfn-lint on each (~150 s on a loaded machine).
  'test/integration/deploy-template.test.ts',
  // Every bench section at its smoke size, one after the other (~170 s, 80 s of CPU, loaded).
  'test/integration/bench-smoke.test.ts',
  'test/integration/kafka-scram.test.ts',
  'test/simulation/reconcile-long-horizon.test.ts',
  'test/simulation/reconcile-held-bounds.test.ts',
  'test/integration/workflows.test.ts',
  'test/integration/reconcile.test.ts',
  'test/integration/notifications.test.ts',
  'test/integration/fuzz-tasks.test.ts',
  'test/simulation/workflows-at-size.test.ts',
  // The unit group's longest.
  'test/unit/core/once/run-once.test.ts',
  'test/unit/core/reconcile/history.test.ts',
  'test/unit/infra/local/step-functions-limits.test.ts',
  'test/unit/bundles.test.ts',
];

class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const i = FIRST.indexOf(relative(this.ctx.config.root, spec.moduleId));
      return i < 0 ? FIRST.length : i;
    };
    const order = (spec: TestSpecification) => spec.project.config.sequence.groupOrder;
    // Array.prototype.sort is stable: the rest keep the base order.
    return base.sort((a, b) => order(a) - order(b) || rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          setupFiles,
          // Files share a worker's module cache: 17 s instead of 40 s on 2 cores (import and
          // transform once per worker, not per file). Unit tests hold no module state between
          // files: the suite passes in any order (checked with --sequence.shuffle).
          isolate: false,
          include: ['test/unit/**/*.test.ts'],
          sequence: { groupOrder: 0 },
          // With the simulation files, on both cores (see there).
          maxWorkers: 2,
        },
      },
      {
        test: {
          // Months of schedules on an injected clock and clusters at a large user's size: no
          // services, minutes of CPU (npm test runs them; npm run test:unit does not).
          name: 'simulation',
          setupFiles,
          include: ['test/simulation/**/*.test.ts'],
          sequence: { groupOrder: 0 },
          // One group with the unit files (a group's projects must agree on maxWorkers), on both
          // cores: Vitest's default on 2 cores is one worker, which ran the whole group on one
          // core (~200 s) while the other idled. Now the audit horizon file (the longest) runs
          // on one core beside the rest.
          maxWorkers: 2,
          // CPU-bound: the audit horizon file took 475 s at load 33 on 2 cores (a clean-clone
          // run beside six other suites), past the 300 s this limit was. The limit is there to
          // end a hang, not to judge speed (bench/ does). No file sets a shorter one: the audit
          // horizon file's own 300 s failed it at 655 s beside a second suite (load 12-24).
          testTimeout: 1_800_000,
        },
      },
      {
        test: {
          name: 'integration',
          // Every HTTP exchange is checked against the OpenAPI document.
          setupFiles: [...setupFiles, 'test/helpers/openapi-hook.ts'],
          include: ['test/integration/**/*.test.ts'],
          sequence: { groupOrder: 1 },
          // One local stack (Kafka + DynamoDB) for the whole run; tests use unique names.
          globalSetup: ['test/helpers/global-setup.ts'],
          // Limits end a hang; they never judge speed (bench/ does). At load (a second suite
          // beside this one, load 12-24) files with limits of their own, 90-420 s, failed on them
          // (publish-concurrency, local-stack-lifecycle, faults-broker-restart, bench smoke,
          // txn-faults): no file sets a shorter one now, and a hang still ends well inside CI's
          // 90 minutes.
          testTimeout: 600_000,
          hookTimeout: 600_000,
          // Three workers on two cores: most files mostly wait (on brokers, consumer groups, a
          // real schedule, sleeps). On two workers the project used 466 s of CPU in all (brokers
          // and children included) in what takes ~590 s on a quiet machine: under half of the two
          // cores. Files that start brokers of their own must not pile up: the FIRST list starts
          // the CPU-heavy chaos run beside two that wait, and the others one by one after.
          maxWorkers: 3,
        },
      },
    ],
  },
});
