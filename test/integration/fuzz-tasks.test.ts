import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TallyError } from '../../functions/core/shared/errors.js';
import { useFuzzing } from '../helpers/fuzzing.js';
import { lambdaContext } from '../helpers/http-event.js';

// Property-based fuzzing of every non-HTTP entry point (Step Functions tasks, EventBridge
// schedules, the MSK-triggered example) on the real local broker and DynamoDB API: whatever the
// input, a task either returns or throws one of our errors — whose stable name Step Functions'
// Retry/Catch match — never a TypeError or anything else, and nothing is left unhandled.
// `npm test` generates 2,000 inputs per task; `npm run test:fuzz` the full 10,000 (TALLY_FUZZ_RUNS).
const RUNS = Number(process.env.TALLY_FUZZ_RUNS ?? 2_000);

// biome-ignore lint/suspicious/noExplicitAny: middy handlers of several event types
type Task = (input: any, context: any) => Promise<unknown>;

describe('task and event inputs under fuzzing', { timeout: 600_000 }, () => {
  const fuzzing = useFuzzing('tally-test-fuzz-tasks', 1, {
    TALLY_RECEIPTS_GROUP: 'fuzz-downstream',
  });
  const { unhandled } = fuzzing;

  const name = fc.stringMatching(/^[A-Za-z0-9._-]{1,20}$/);
  // Inputs near the expected shapes, and anything at all.
  const input = fc.oneof(
    fc.anything(),
    fc.jsonValue(),
    fc.record(
      {
        group: fc.oneof(name, fc.anything()),
        topic: fc.oneof(
          name,
          fc.constant(null).map(() => fuzzing.topic),
          fc.anything(),
        ),
        groups: fc.oneof(fc.array(name), fc.anything()),
        token: fc.oneof(fc.string(), fc.anything()),
        workflow: fc.oneof(fc.constant('offset-repair'), fc.anything()),
        subject: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), fc.anything()),
        plan: fc.oneof(
          fc.record({
            group: name,
            partitions: fc.array(
              fc.record({ topic: name, partition: fc.integer(), target: fc.integer() }),
              { maxLength: 2 },
            ),
          }),
          fc.anything(),
        ),
        item: fc.oneof(
          fc.record(
            {
              idempotencyKey: fc.oneof(fc.stringMatching(/^[\x21-\x7e]{1,20}$/), fc.anything()),
              stream: fc.oneof(name, fc.anything()),
              value: fc.oneof(
                fc.record({ type: fc.constant('STRING'), data: fc.string() }),
                fc.anything(),
              ),
            },
            { requiredKeys: [] },
          ),
          fc.anything(),
        ),
        published: fc.anything(),
        audits: fc.anything(),
        source: fc.oneof(fc.constant('aws.events'), fc.string()),
        records: fc.anything(),
      },
      { requiredKeys: [] },
    ),
  );

  const fuzz = async (load: () => Promise<Task>, runs: number) => {
    const task = await load();
    const thrown: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(input, async (value) => {
        try {
          await task(value, lambdaContext());
        } catch (error) {
          const name = (error as Error)?.name ?? typeof error;
          thrown[name] = (thrown[name] ?? 0) + 1;
          expect(error, `${name}: ${(error as Error)?.message}`).toBeInstanceOf(TallyError);
        }
      }),
      { numRuns: runs, endOnFailure: true },
    );
    expect(unhandled).toEqual([]);
    return thrown;
  };

  // Spelled out: Vite resolves only literal dynamic imports.
  const TASKS: Record<string, () => Promise<Task>> = {
    planRepair: async () => (await import('../../functions/workflows/repair-tasks.js')).planRepair,
    checkGroupEmpty: async () =>
      (await import('../../functions/workflows/repair-tasks.js')).checkGroupEmpty,
    executeRepair: async () =>
      (await import('../../functions/workflows/repair-tasks.js')).executeRepair,
    requestApproval: async () =>
      (await import('../../functions/workflows/request-approval.js')).handler,
    publishRecord: async () =>
      (await import('../../functions/workflows/publish-record.js')).handler,
    verifyPublished: async () =>
      (await import('../../functions/workflows/verify-published.js')).handler,
    audit: async () => (await import('../../functions/audit/task-handler.js')).handler,
    downstreamExample: async () =>
      (await import('../../functions/downstream-example/handler.js')).handler,
  };
  for (const [taskName, load] of Object.entries(TASKS)) {
    it(`${taskName}: ${RUNS.toLocaleString('en')} generated inputs, only our errors`, async () => {
      const thrown = await fuzz(load, RUNS);
      process.stderr.write(`fuzz task ${taskName}: threw ${JSON.stringify(thrown)}\n`);
    });
  }
  // Its input is ignored by design (every run reconciles every group): a few hundred suffice.
  it('reconcile (schedule/task; input ignored): generated inputs, only our errors', async () => {
    await fuzz(
      async () => (await import('../../functions/reconcile/task-handler.js')).handler,
      Math.ceil(RUNS / 50),
    );
  });
});
