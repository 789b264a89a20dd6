import { describe, expect, it } from 'vitest';
import {
  type Invoke,
  LAMBDA_REQUEST_LIMIT,
  LAMBDA_RESPONSE_LIMIT,
  lambdaLimits,
  payloadBytes,
  STATE_PAYLOAD_LIMIT,
} from '../../../../infra/local/payload-limits.js';
import {
  createLocalStepFunctions,
  serveLocalStepFunctions,
  TaskTokenError,
  ValidationException,
} from '../../../../infra/local/step-functions.js';

// The local runner fails an execution where AWS would: every limit is crossed once, by one byte
// where the size is ours to choose, and the value at the limit passes.

const fn = (name: string) => ({ 'Fn::GetAtt': [`${name}LambdaFunction`, 'Arn'] });
/** A JSON string value whose payload is exactly `bytes` long (quotes included). */
const sized = (bytes: number) => 'x'.repeat(bytes - 2);

const oneTask = (task: Record<string, unknown>) => ({
  'one-task': {
    StartAt: 'Work',
    States: {
      Work: {
        Type: 'Task',
        Resource: fn('work'),
        TimeoutSeconds: 10,
        // Keeps Caught reachable (the validator insists) where a test sets no catcher of its own.
        Catch: [{ ErrorEquals: ['NeverThrown'], Next: 'Caught' }],
        ...task,
        Next: 'Done',
      },
      Done: { Type: 'Succeed' },
      Caught: { Type: 'Pass', End: true },
    },
  },
});

async function run(
  definitions: Record<string, Record<string, unknown>>,
  invoke: Invoke,
  input: unknown = {},
) {
  const sfn = createLocalStepFunctions({ invoke, definitions, retryIntervalMs: 0 });
  const name = Object.keys(definitions)[0] as string;
  return sfn.settled(name, sfn.start(name, input).name, 10_000);
}

const returning =
  (value: unknown): Invoke =>
  async () =>
    value;

describe('the local runner enforces Step Functions payload limits', () => {
  it('a task result of 262,144 bytes passes; one byte more fails before ResultSelector applies', async () => {
    const shrink = { ResultSelector: { 'n.$': "States.StringToJson('1')" } };
    const ok = await run(oneTask(shrink), returning(sized(STATE_PAYLOAD_LIMIT)));
    expect(ok.status, `${ok.error}: ${ok.cause}`).toBe('SUCCEEDED');

    const over = await run(oneTask(shrink), returning(sized(STATE_PAYLOAD_LIMIT + 1)));
    expect(over.status).toBe('FAILED');
    expect(over.error).toBe('States.DataLimitExceeded');
    expect(over.cause).toContain('returned a result with a size exceeding');
    expect(over.history).toContainEqual(
      expect.objectContaining({
        type: 'StateFailed',
        state: 'Work',
        error: 'States.DataLimitExceeded',
      }),
    );
  });

  it('counts UTF-8 bytes, not characters', async () => {
    const twoByteChars = 'é'.repeat(STATE_PAYLOAD_LIMIT / 2);
    expect(twoByteChars.length).toBeLessThan(STATE_PAYLOAD_LIMIT);
    const done = await run(oneTask({}), returning(twoByteChars));
    expect(done.error).toBe('States.DataLimitExceeded');
  });

  it('States.ALL neither catches nor retries it (a terminal error); a catcher naming it does', async () => {
    const tooLarge = returning(sized(STATE_PAYLOAD_LIMIT + 1));
    let calls = 0;
    const counted: Invoke = async (f, p) => {
      calls++;
      return tooLarge(f, p);
    };
    const all = await run(
      oneTask({
        Retry: [{ ErrorEquals: ['States.ALL'], MaxAttempts: 2 }],
        Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Caught' }],
      }),
      counted,
    );
    expect(all.status).toBe('FAILED');
    expect(all.error).toBe('States.DataLimitExceeded');
    expect(calls).toBe(1);

    const named = await run(
      oneTask({
        Catch: [
          { ErrorEquals: ['States.DataLimitExceeded'], ResultPath: '$.error', Next: 'Caught' },
          { ErrorEquals: ['States.ALL'], Next: 'Done' },
        ],
      }),
      tooLarge,
    );
    expect(named.status).toBe('SUCCEEDED');
    expect(named.output).toMatchObject({ error: { Error: 'States.DataLimitExceeded' } });
  });

  it('fails a task whose input after Parameters is over the limit, without invoking it', async () => {
    let invoked = false;
    const done = await run(
      oneTask({ Parameters: { 'a.$': '$.a', 'b.$': '$.a' } }),
      async () => {
        invoked = true;
        return {};
      },
      { a: sized(STATE_PAYLOAD_LIMIT / 2) },
    );
    expect(done.error).toBe('States.DataLimitExceeded');
    expect(done.cause).toContain("'Work' has an input");
    expect(invoked).toBe(false);
  });

  it('fails the execution, uncaught, when a state output (after ResultPath) is over the limit', async () => {
    const half = sized(STATE_PAYLOAD_LIMIT / 2 + 10);
    const done = await run(
      oneTask({
        ResultPath: '$.result',
        Catch: [{ ErrorEquals: ['States.DataLimitExceeded'], Next: 'Caught' }],
      }),
      returning(half),
      { input: half },
    );
    expect(done.status).toBe('FAILED');
    expect(done.error).toBe('States.DataLimitExceeded');
    expect(done.history.map((e) => e.state)).not.toContain('Caught');
  });

  it('fails a Map whose gathered results are over the limit, though each iteration fits', async () => {
    const definitions = {
      map: {
        StartAt: 'Each',
        States: {
          Each: {
            Type: 'Map',
            ItemsPath: '$.items',
            ItemProcessor: {
              ProcessorConfig: { Mode: 'INLINE' },
              StartAt: 'Work',
              States: {
                Work: { Type: 'Task', Resource: fn('work'), TimeoutSeconds: 10, End: true },
              },
            },
            Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Caught' }],
            ResultPath: '$.results',
            End: true,
          },
          Caught: { Type: 'Pass', End: true },
        },
      },
    };
    const fits = await run(definitions, returning(sized(1000)), { items: [1, 2, 3] });
    expect(fits.status).toBe('SUCCEEDED');
    const over = await run(definitions, returning(sized(1000)), { items: [...Array(300).keys()] });
    expect(over.status).toBe('FAILED');
    expect(over.error).toBe('States.DataLimitExceeded');
  });

  it('refuses to start an execution whose input is over the limit (StartExecution: 400)', async () => {
    const sfn = createLocalStepFunctions({ invoke: returning({}), definitions: oneTask({}) });
    expect(() => sfn.start('one-task', sized(STATE_PAYLOAD_LIMIT + 1))).toThrow(
      ValidationException,
    );
    expect(sfn.start('one-task', sized(STATE_PAYLOAD_LIMIT)).status).toBe('RUNNING');
    const server = await serveLocalStepFunctions(sfn);
    try {
      const response = await fetch(`${server.url}/local/state-machines/one-task/executions`, {
        method: 'POST',
        body: JSON.stringify(sized(STATE_PAYLOAD_LIMIT + 1)),
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ __type: 'ValidationException' });
    } finally {
      sfn.stop();
      await server.close();
    }
  });

  it('refuses SendTaskSuccess output over the limit; the task keeps waiting', async () => {
    const definitions = {
      wait: {
        StartAt: 'Ask',
        States: {
          Ask: {
            Type: 'Task',
            Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
            Parameters: { FunctionName: fn('ask'), Payload: { 'token.$': '$$.Task.Token' } },
            TimeoutSeconds: 10,
            End: true,
          },
        },
      },
    };
    let token = '';
    const sfn = createLocalStepFunctions({
      definitions,
      invoke: async (_, payload) => {
        token = (payload as { token: string }).token;
        return {};
      },
    });
    const execution = sfn.start('wait', {});
    while (!token) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(() =>
      sfn.sendTaskSuccess(token, JSON.stringify(sized(STATE_PAYLOAD_LIMIT + 1))),
    ).toThrow(TaskTokenError);
    sfn.sendTaskSuccess(token, '{"ok":true}');
    expect((await sfn.settled('wait', execution.name)).output).toEqual({ ok: true });
  });
});

describe("the local runner's invokes keep Lambda's synchronous payload limits", () => {
  it('a response over 6 MB fails as Function.ResponseSizeTooLarge (a function error States.ALL catches)', async () => {
    const big = returning(sized(LAMBDA_RESPONSE_LIMIT + 1));
    await expect(lambdaLimits(big)('work', {})).rejects.toMatchObject({
      name: 'Function.ResponseSizeTooLarge',
    });
    await expect(
      lambdaLimits(returning(sized(LAMBDA_RESPONSE_LIMIT)))('work', {}),
    ).resolves.toBeTypeOf('string');
    const done = await run(
      oneTask({ Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Caught' }] }),
      big,
    );
    expect(done.status).toBe('SUCCEEDED');
    expect(done.history.map((e) => e.state)).toContain('Caught');
  });

  it('a request over 6 MB is refused before the function runs', async () => {
    let ran = false;
    const invoke = lambdaLimits(async () => {
      ran = true;
    });
    await expect(invoke('work', sized(LAMBDA_REQUEST_LIMIT + 1))).rejects.toMatchObject({
      name: 'Lambda.RequestEntityTooLargeException',
    });
    expect(ran).toBe(false);
    expect(payloadBytes(sized(LAMBDA_REQUEST_LIMIT))).toBe(LAMBDA_REQUEST_LIMIT);
  });
});
