import { describe, expect, it } from 'vitest';
import { type Invoke, STATE_PAYLOAD_LIMIT } from '../../../../infra/local/payload-limits.js';
import { createLocalStepFunctions } from '../../../../infra/local/step-functions.js';

// The local runner executes Map states in DISTRIBUTED mode as Step Functions does: one child
// execution per item, at most MaxConcurrency at once, ItemSelector over the Map's input and the
// item, each child's own Retry, the Map Run failing with States.ExceedToleratedFailureThreshold
// past its tolerated failures, and the 256 KiB limit on a child's input and on the Map's output.

const fn = (name: string) => ({ 'Fn::GetAtt': [`${name}LambdaFunction`, 'Arn'] });

const mapMachine = (map: Record<string, unknown> = {}, child: Record<string, unknown> = {}) => ({
  fan: {
    StartAt: 'Fan',
    States: {
      Fan: {
        Type: 'Map',
        ItemsPath: '$.items',
        ItemSelector: {
          'label.$': '$.label',
          'n.$': '$$.Map.Item.Value',
          'i.$': '$$.Map.Item.Index',
        },
        ItemProcessor: {
          ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
          StartAt: 'Work',
          States: {
            Work: {
              Type: 'Task',
              Resource: fn('work'),
              TimeoutSeconds: 10,
              Retry: [{ ErrorEquals: ['Flaky'], MaxAttempts: 2, BackoffRate: 2 }],
              ...child,
              End: true,
            },
          },
        },
        ...map,
        End: true,
      },
    },
  },
});

type Work = { label: string; n: number; i: number };

/** Records how many `work` calls run at once; `behave` decides each call's answer. */
function worker(behave: (input: Work, attempt: number) => unknown, delayMs = 20) {
  const calls: Work[] = [];
  let inFlight = 0;
  let peak = 0;
  const invoke: Invoke = async (_fn, payload) => {
    const input = payload as Work;
    calls.push(input);
    inFlight++;
    peak = Math.max(peak, inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return behave(input, calls.filter((c) => c.i === input.i).length);
    } finally {
      inFlight--;
    }
  };
  return { invoke, calls, peak: () => peak };
}

const named = (name: string, message = name) => Object.assign(new Error(message), { name });

async function run(
  definitions: Record<string, Record<string, unknown>>,
  invoke: Invoke,
  input: unknown,
) {
  const sfn = createLocalStepFunctions({ invoke, definitions, retryIntervalMs: 0 });
  return sfn.settled('fan', sfn.start('fan', input).name, 20_000);
}

const items = (n: number) => Array.from({ length: n }, (_, i) => i * 10);

// Each test builds its runner, validating its definitions (asl-validator is slow on a busy machine).
describe('the local runner runs distributed Maps', { timeout: 30_000 }, () => {
  it('runs one child execution per item, ItemSelector seeing the Map input and the item; outputs in item order', async () => {
    const w = worker((input) => ({ doubled: input.n * 2, label: input.label, i: input.i }));
    const done = await run(mapMachine(), w.invoke, { label: 'x', items: items(5) });
    expect(done.status, `${done.error}: ${done.cause}`).toBe('SUCCEEDED');
    expect(done.output).toEqual(items(5).map((n, i) => ({ doubled: n * 2, label: 'x', i })));
    expect(done.history.map((e) => e.type)).toEqual(
      expect.arrayContaining(['MapRunStarted', 'MapRunFinished', 'MapRunSucceeded']),
    );
    expect(done.history.find((e) => e.type === 'MapRunFinished')?.mapRun).toMatchObject({
      items: 5,
      succeeded: 5,
      failed: 0,
    });
  });

  it('runs children in parallel, never more than MaxConcurrency at once', async () => {
    const bounded = worker((input) => input.n);
    const done = await run(mapMachine({ MaxConcurrency: 3 }), bounded.invoke, {
      label: '',
      items: items(12),
    });
    expect(done.status, `${done.error}: ${done.cause}`).toBe('SUCCEEDED');
    expect(bounded.peak()).toBe(3);
    // MaxConcurrency 0 (or none) is AWS's "up to 10,000": every child at once here.
    const unbounded = worker((input) => input.n);
    await run(mapMachine({ MaxConcurrency: 0 }), unbounded.invoke, { label: '', items: items(60) });
    expect(unbounded.peak()).toBe(60);
  });

  it("retries a child's failed task by the child's Retry; the Map succeeds", async () => {
    const w = worker((input, attempt) => {
      if (input.i === 2 && attempt === 1) throw named('Flaky');
      return input.n;
    });
    const done = await run(mapMachine(), w.invoke, { label: '', items: items(4) });
    expect(done.status, `${done.error}: ${done.cause}`).toBe('SUCCEEDED');
    expect(done.output).toEqual(items(4));
    expect(w.calls.filter((c) => c.i === 2)).toHaveLength(2);
  });

  it('fails the Map Run with States.ExceedToleratedFailureThreshold, not the child error, which a Catch can match', async () => {
    const w = worker((input) => {
      if (input.i === 1) throw named('Broken');
      return input.n;
    });
    const failed = await run(mapMachine(), w.invoke, { label: '', items: items(4) });
    expect(failed.status).toBe('FAILED');
    expect(failed.error).toBe('States.ExceedToleratedFailureThreshold');

    const caught = mapMachine({
      Catch: [
        {
          ErrorEquals: ['States.ExceedToleratedFailureThreshold'],
          Next: 'Caught',
          ResultPath: '$.error',
        },
      ],
    });
    const fan = caught.fan.States.Fan as Record<string, unknown>;
    delete fan.End;
    fan.Next = 'Done';
    Object.assign(caught.fan.States, {
      Caught: { Type: 'Pass', End: true },
      Done: { Type: 'Succeed' },
    });
    const handled = await run(caught, w.invoke, { label: '', items: items(4) });
    expect(handled.status, `${handled.error}: ${handled.cause}`).toBe('SUCCEEDED');
    expect(handled.output).toMatchObject({
      error: { Error: 'States.ExceedToleratedFailureThreshold' },
    });
  });

  it('tolerates failed children up to ToleratedFailurePercentage or ToleratedFailureCount', async () => {
    const w = worker((input) => {
      if (input.i === 0) throw named('Broken');
      return input.n;
    });
    const input = { label: '', items: items(4) };
    // 1 of 4 failed: 25 %.
    expect(
      (await run(mapMachine({ ToleratedFailurePercentage: 25 }), w.invoke, input)).status,
    ).toBe('SUCCEEDED');
    expect((await run(mapMachine({ ToleratedFailurePercentage: 24 }), w.invoke, input)).error).toBe(
      'States.ExceedToleratedFailureThreshold',
    );
    expect((await run(mapMachine({ ToleratedFailureCount: 1 }), w.invoke, input)).status).toBe(
      'SUCCEEDED',
    );
  });

  it("holds a child's input (after ItemSelector) and the Map's output to 256 KiB", async () => {
    const w = worker((input) => input.n);
    // The execution input (one copy of `label`) fits; each child's (two copies) does not.
    const label = 'x'.repeat(STATE_PAYLOAD_LIMIT / 2 + 10);
    const twice = { ItemSelector: { 'label.$': '$.label', 'again.$': '$.label' } };
    const tooBigChild = await run(mapMachine(twice), w.invoke, { label, items: [1] });
    expect(tooBigChild.status).toBe('FAILED');
    expect(tooBigChild.error).toBe('States.ExceedToleratedFailureThreshold');
    expect(w.calls).toHaveLength(0);

    const quarter = 'y'.repeat(STATE_PAYLOAD_LIMIT / 4);
    const tooBigOutput = await run(mapMachine(), worker(() => quarter).invoke, {
      label: '',
      items: items(4),
    });
    expect(tooBigOutput.status).toBe('FAILED');
    expect(tooBigOutput.error).toBe('States.DataLimitExceeded');
  });

  it('refuses a distributed Map that uses what it cannot run locally (ItemReader)', () => {
    const definitions = mapMachine({ ItemReader: { Resource: 'arn:aws:states:::s3:getObject' } });
    expect(() => createLocalStepFunctions({ invoke: async () => null, definitions })).toThrow(
      /does not run ItemReader/,
    );
  });
});
