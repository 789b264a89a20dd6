import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import {
  type ChildRun,
  childDefinition,
  type MapRunFigures,
  runDistributedMap,
  splitDistributedMaps,
} from './distributed-map.js';
import {
  type Invoke,
  lambdaLimits,
  limitStateOutputs,
  resultTooLarge,
  STATE_PAYLOAD_LIMIT,
  taskLimitError,
  within,
} from './payload-limits.js';

// The state machines of infra/state-machines/, run locally by an ASL interpreter
// (aws-local-stepfunctions), their Task states calling our functions through `invoke`. It also
// answers the few Step Functions API calls our functions make (SendTaskSuccess, SendTaskFailure,
// SendTaskHeartbeat), so the approvals route completes a waiting task locally exactly as in AWS.
// AWS's payload limits hold here as there (payload-limits.ts): an execution input, a task's input
// or result, or a state's output over 256 KiB fails as it would in AWS. Map states in DISTRIBUTED
// mode run their items as child executions, as AWS does (distributed-map.ts).

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

// aws-local-stepfunctions 3 calls Promise.withResolvers (Node 22) in every Task state.
const promises = Promise as unknown as { withResolvers?: () => Deferred<unknown> };
promises.withResolvers ??= deferred;

export const STATE_MACHINES_DIR = fileURLToPath(new URL('../state-machines/', import.meta.url));

/** Every `<name>.asl.json` of infra/state-machines/, by name. */
export function loadDefinitions(dir = STATE_MACHINES_DIR): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    readdirSync(dir)
      .filter((file) => file.endsWith('.asl.json'))
      .map((file) => [
        basename(file, '.asl.json'),
        JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>,
      ]),
  );
}

const LOCAL_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:';
/** What a distributed Map state becomes for the interpreter: a Task this runner serves. */
const DISTRIBUTED_MAP_ARN = `${LOCAL_ARN}local-distributed-map`;
const TOKEN_PLACEHOLDER = 'tally-local-task-token';

/** `{"Fn::GetAtt": ["PlanRepairLambdaFunction", "Arn"]}` → `planRepair` (serverless's naming). */
export function functionOfIntrinsic(value: unknown): string | undefined {
  const getAtt = (value as { 'Fn::GetAtt'?: unknown } | null)?.['Fn::GetAtt'];
  if (!Array.isArray(getAtt) || getAtt[1] !== 'Arn' || typeof getAtt[0] !== 'string') return;
  const match = /^(.+)LambdaFunction$/.exec(getAtt[0]);
  return match?.[1] ? match[1].charAt(0).toLowerCase() + match[1].slice(1) : undefined;
}

/** The function a Task state calls, directly or through `lambda:invoke` (`Parameters.FunctionName`). */
export function functionOfTask(state: Record<string, unknown>): string | undefined {
  return (
    functionOfIntrinsic(state.Resource) ??
    functionOfIntrinsic((state.Parameters as Record<string, unknown> | undefined)?.FunctionName)
  );
}

/** A copy with every function intrinsic replaced by a plain ARN the interpreter accepts. */
function localize(value: unknown): unknown {
  const fn = functionOfIntrinsic(value);
  if (fn !== undefined) return `${LOCAL_ARN}${fn}`;
  if (Array.isArray(value)) return value.map(localize);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, localize(v)]));
  }
  return value;
}

interface TaskState {
  readonly functionName: string;
  readonly waitForToken: boolean;
  readonly definition: Record<string, unknown>;
}

/** Task states by name, in Map and Parallel states too (names are unique per machine). */
function taskStates(
  definition: unknown,
  out = new Map<string, TaskState>(),
): Map<string, TaskState> {
  const states = (definition as { States?: Record<string, Record<string, unknown>> }).States ?? {};
  for (const [name, state] of Object.entries(states)) {
    // A distributed Map's tasks run in its child executions (compile below).
    if (state.Resource === DISTRIBUTED_MAP_ARN) continue;
    if (state.Type === 'Task') {
      const functionName = functionOfTask(state);
      if (functionName === undefined) {
        throw new Error(`state ${name}: only our Lambda functions can be run locally`);
      }
      out.set(name, {
        functionName,
        waitForToken: String(state.Resource).endsWith('.waitForTaskToken'),
        definition: state,
      });
    }
    for (const inner of [state.ItemProcessor, state.Iterator, ...((state.Branches as []) ?? [])])
      if (inner) taskStates(inner, out);
  }
  return out;
}

export interface ExecutionEvent {
  readonly timestamp: string;
  readonly type: string;
  readonly state?: string;
  readonly error?: string;
  readonly cause?: unknown;
  /** On MapRunFinished: how a distributed Map's children went. */
  readonly mapRun?: MapRunFigures;
}

export interface Execution {
  readonly executionArn: string;
  readonly stateMachine: string;
  readonly name: string;
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED';
  readonly startDate: string;
  stopDate?: string;
  readonly input: unknown;
  output?: unknown;
  error?: string;
  cause?: string;
  readonly history: ExecutionEvent[];
}

export class TaskTokenError extends Error {
  constructor(
    readonly type: 'TaskDoesNotExist' | 'InvalidToken' | 'ValidationException',
    message: string,
  ) {
    super(message);
  }
}

export interface LocalStepFunctionsOptions {
  readonly invoke: Invoke;
  readonly definitions?: Record<string, Record<string, unknown>>;
  /** Instead of each Retry's intervals (tests): milliseconds before every retry. */
  readonly retryIntervalMs?: number;
  /** Instead of each Wait state's time (tests): milliseconds. */
  readonly waitMs?: number;
}

/** StartExecution's refusal of an input over the limit: no execution starts. */
export class ValidationException extends Error {
  override readonly name = 'ValidationException';
}

/**
 * Definitions asl-validator has passed in this process. It builds and compiles its JSON schemas
 * anew on every call (0.3–1.4 s on this machine), and tests build a runner per stack or case from
 * the same few definitions: each distinct definition is validated once, as CreateStateMachine
 * validates it once in AWS. One that fails is not remembered, so it fails every time.
 */
const validated = new Set<string>();

/** An interpreter whose every state's output counts against the limit (limitStateOutputs). */
function limitedStateMachine(definition: Record<string, unknown>): StateMachine {
  const local = localize(definition) as StateMachineDefinition;
  const text = JSON.stringify(local);
  const machine = new StateMachine(local, {
    validationOptions: validated.has(text)
      ? { noValidate: true }
      : { checkPaths: true, checkArn: true },
  });
  validated.add(text);
  // `execute` is the interpreter's run loop (private in its types); it receives the run's logger.
  const loop = machine as unknown as {
    execute(input: unknown, options: { eventLogger: object }, cleanup: () => void): unknown;
  };
  const execute = loop.execute;
  loop.execute = function (input, runOptions, cleanup) {
    limitStateOutputs(runOptions.eventLogger);
    return execute.call(this, input, runOptions, cleanup);
  };
  return machine;
}

/** A definition ready to run: its interpreter, Task and Wait states, and distributed Maps. */
interface Compiled {
  readonly machine: StateMachine;
  readonly tasks: Map<string, TaskState>;
  readonly waits: readonly string[];
  /** Each distributed Map state by name, with its child executions' definition compiled. */
  readonly maps: ReadonlyMap<string, { state: Record<string, unknown>; child: Compiled }>;
}

function compile(definition: Record<string, unknown>): Compiled {
  const split = splitDistributedMaps(definition, DISTRIBUTED_MAP_ARN);
  const states = (split.definition.States ?? {}) as Record<string, { Type?: string }>;
  return {
    machine: limitedStateMachine(split.definition),
    tasks: taskStates(split.definition),
    waits: Object.entries(states)
      .filter(([, s]) => s.Type === 'Wait')
      .map(([name]) => name),
    maps: new Map(
      [...split.maps].map(([name, state]) => [
        name,
        { state, child: compile(childDefinition(state)) },
      ]),
    ),
  };
}

export function createLocalStepFunctions(options: LocalStepFunctionsOptions) {
  const definitions = options.definitions ?? loadDefinitions();
  const invoke = lambdaLimits(options.invoke);
  const machines = new Map(
    Object.entries(definitions).map(([name, definition]) => [name, compile(definition)]),
  );
  /** Child executions of distributed Maps still running, to abort with their parents. */
  const children = new Set<() => void>();
  const executions = new Map<string, Execution>();
  const aborts = new Map<string, () => void>();
  const waiting = new Map<string, Deferred<unknown>>();

  /** The task waiting on `taskToken`, as Step Functions' API would find it. */
  const waiter = (taskToken: string) => {
    const wait = waiting.get(taskToken);
    if (!wait) throw new TaskTokenError('TaskDoesNotExist', 'no task waits on this token');
    return wait;
  };

  const errorOf = (failure: unknown) =>
    Object.assign(new Error(String((failure as Error)?.message ?? failure)), {
      name: (failure as Error)?.name ?? 'Error',
    });

  function handlersFor(tasks: Map<string, TaskState>) {
    return Object.fromEntries(
      [...tasks].map(([stateName, task]) => [
        stateName,
        async (input: unknown) => {
          // The input after Parameters, then the result before ResultSelector, as AWS checks them.
          within(input, STATE_PAYLOAD_LIMIT, () =>
            taskLimitError(
              task.definition,
              `The state/task '${stateName}' has an input with a size exceeding the maximum number of bytes service limit.`,
            ),
          );
          if (!task.waitForToken) {
            const result = await invoke(task.functionName, input);
            within(result, STATE_PAYLOAD_LIMIT, () =>
              taskLimitError(task.definition, resultTooLarge(`${LOCAL_ARN}${task.functionName}`)),
            );
            return result as never;
          }
          // `.waitForTaskToken`: a fresh token for this wait, in place of the placeholder the
          // interpreter put where the definition reads $$.Task.Token.
          const token = `${randomUUID()}.${randomUUID()}`;
          const payload = JSON.parse(
            JSON.stringify((input as { Payload?: unknown }).Payload ?? {}).replaceAll(
              TOKEN_PLACEHOLDER,
              token,
            ),
          );
          const wait = deferred<unknown>();
          waiting.set(token, wait);
          try {
            await invoke(task.functionName, payload);
            return (await wait.promise) as never;
          } catch (error) {
            throw errorOf(error);
          } finally {
            waiting.delete(token);
          }
        },
      ]),
    );
  }

  /** The interpreter's overrides for one run of `compiled`: our handlers, test timings. */
  function overridesFor(compiled: Compiled, execution: Execution) {
    const retrying = [...compiled.tasks.keys(), ...compiled.maps.keys()];
    return {
      taskResourceLocalHandlers: {
        ...handlersFor(compiled.tasks),
        ...mapHandlersFor(compiled, execution),
      },
      ...(options.waitMs !== undefined && {
        waitTimeOverrides: Object.fromEntries(
          compiled.waits.map((n) => [n, options.waitMs as number]),
        ),
      }),
      ...(options.retryIntervalMs !== undefined && {
        retryIntervalOverrides: Object.fromEntries(
          retrying.map((n) => [n, options.retryIntervalMs as number]),
        ),
      }),
    };
  }

  /** Each distributed Map of `compiled` as a Map Run of child executions (distributed-map.ts). */
  function mapHandlersFor(compiled: Compiled, execution: Execution) {
    const event = (type: string, state: string, extra: Partial<ExecutionEvent> = {}) =>
      execution.history.push({ timestamp: new Date().toISOString(), type, state, ...extra });
    return Object.fromEntries(
      [...compiled.maps].map(([stateName, { state, child }]) => [
        stateName,
        async (input: unknown) => {
          event('MapRunStarted', stateName);
          const startChild = (mapInput: unknown, item: { Index: number; Value: unknown }) => {
            const name = `${execution.name}:${stateName}:${item.Index}`;
            const run = child.machine.run(
              (state.ItemSelector === undefined ? item.Value : mapInput) as never,
              {
                overrides: overridesFor(child, execution),
                context: {
                  Execution: { Id: `${execution.executionArn}/${name}`, Name: name },
                  Task: { Token: TOKEN_PLACEHOLDER },
                  Map: { Item: item },
                } as never,
              },
            );
            children.add(run.abort);
            void run.result.catch(() => {}).finally(() => children.delete(run.abort));
            return { result: run.result, abort: run.abort } satisfies ChildRun;
          };
          try {
            const results = await runDistributedMap(state, input, startChild, (figures) =>
              event('MapRunFinished', stateName, { mapRun: figures }),
            );
            within(results, STATE_PAYLOAD_LIMIT, () =>
              taskLimitError(state, resultTooLarge(stateName)),
            );
            event('MapRunSucceeded', stateName);
            return results as never;
          } catch (error) {
            event('MapRunFailed', stateName, { error: (error as Error)?.name });
            throw error;
          }
        },
      ]),
    );
  }

  return {
    names: () => [...machines.keys()],

    start(stateMachine: string, input: unknown): Execution {
      const entry = machines.get(stateMachine);
      if (!entry) throw new Error(`no state machine ${stateMachine}`);
      within(
        input,
        STATE_PAYLOAD_LIMIT,
        (bytes) =>
          new ValidationException(
            `1 validation error detected: Value at 'input' failed to satisfy constraint: Member must have length less than or equal to ${STATE_PAYLOAD_LIMIT} (${bytes} bytes)`,
          ),
      );
      const name = randomUUID();
      const executionArn = `arn:aws:states:us-east-1:000000000000:execution:${stateMachine}:${name}`;
      const execution: Execution = {
        executionArn,
        stateMachine,
        name,
        status: 'RUNNING',
        startDate: new Date().toISOString(),
        input,
        history: [],
      };
      executions.set(name, execution);
      const run = entry.machine.run(input as never, {
        overrides: overridesFor(entry, execution),
        context: {
          Execution: { Id: executionArn, Name: name, StartTime: execution.startDate },
          Task: { Token: TOKEN_PLACEHOLDER },
        },
      });
      aborts.set(name, run.abort);
      void (async () => {
        for await (const event of run.eventLogs) {
          const e = event as unknown as {
            type: string;
            timestamp: number;
            state?: { name: string };
            Error?: string;
            Cause?: unknown;
          };
          execution.history.push({
            timestamp: new Date(e.timestamp).toISOString(),
            type: e.type,
            ...(e.state && { state: e.state.name }),
            ...(e.Error !== undefined && { error: e.Error, cause: e.Cause }),
          });
          if (e.type === 'ExecutionFailed' && e.Error !== undefined) {
            execution.error = e.Error;
            execution.cause = typeof e.Cause === 'string' ? e.Cause : JSON.stringify(e.Cause);
          }
        }
      })();
      run.result.then(
        (output) => {
          execution.status = 'SUCCEEDED';
          execution.output = output;
        },
        (error: unknown) => {
          const aborted = (error as Error)?.name === 'ExecutionAbortedError';
          execution.status = aborted ? 'ABORTED' : 'FAILED';
          const cause = (error as { cause?: Error }).cause;
          execution.error ??= cause?.name ?? (error as Error)?.name;
          execution.cause ??= cause?.message ?? (error as Error)?.message;
        },
      );
      void run.result
        .catch(() => {})
        .finally(() => {
          execution.stopDate = new Date().toISOString();
          aborts.delete(name);
        });
      return execution;
    },

    get: (stateMachine: string, name: string): Execution | undefined => {
      const execution = executions.get(name);
      return execution?.stateMachine === stateMachine ? execution : undefined;
    },

    /** Resolves when the execution has stopped (or the timeout passed), with it. */
    async settled(stateMachine: string, name: string, timeoutMs = 60_000): Promise<Execution> {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const execution = executions.get(name);
        if (!execution || execution.stateMachine !== stateMachine) {
          throw new Error(`no execution ${name} of ${stateMachine}`);
        }
        if (execution.stopDate !== undefined || Date.now() > until) return execution;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },

    sendTaskSuccess(taskToken: string, output: string): void {
      const wait = waiter(taskToken);
      if (Buffer.byteLength(output, 'utf8') > STATE_PAYLOAD_LIMIT) {
        throw new TaskTokenError(
          'ValidationException',
          `output: at most ${STATE_PAYLOAD_LIMIT} bytes`,
        );
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(output);
      } catch {
        throw new TaskTokenError('InvalidToken', 'output is not JSON');
      }
      wait.resolve(parsed);
    },

    sendTaskFailure(taskToken: string, error = 'States.TaskFailed', cause = ''): void {
      waiter(taskToken).reject(Object.assign(new Error(cause), { name: error }));
    },

    sendTaskHeartbeat(taskToken: string): void {
      waiter(taskToken);
    },

    /** Aborts every running execution. */
    stop(): void {
      for (const abort of aborts.values()) abort();
      for (const abort of children) abort();
    },
  };
}

export type LocalStepFunctions = ReturnType<typeof createLocalStepFunctions>;

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(response: ServerResponse, status: number, body: unknown, type = 'application/json') {
  response.writeHead(status, { 'content-type': type });
  response.end(JSON.stringify(body));
}

/**
 * Serves the local executions (`POST /local/state-machines/{name}/executions` with the input as
 * the body; `GET /local/state-machines/{name}/executions/{id}`; `GET /local/state-machines`) and
 * the Step Functions API's task-token calls (`POST /` with `X-Amz-Target`).
 */
export async function serveLocalStepFunctions(
  sfn: LocalStepFunctions,
  port = 0,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(async (request, response) => {
    try {
      const url = new URL(request.url ?? '/', 'http://local');
      const target = request.headers['x-amz-target'];
      if (request.method === 'POST' && typeof target === 'string') {
        const body = JSON.parse((await readBody(request)) || '{}') as Record<string, string>;
        const type = 'application/x-amz-json-1.0';
        try {
          const action = target.replace(/^AWSStepFunctions\./, '');
          if (action === 'SendTaskSuccess')
            sfn.sendTaskSuccess(body.taskToken ?? '', body.output ?? '');
          else if (action === 'SendTaskFailure')
            sfn.sendTaskFailure(body.taskToken ?? '', body.error, body.cause);
          else if (action === 'SendTaskHeartbeat') sfn.sendTaskHeartbeat(body.taskToken ?? '');
          else
            return send(
              response,
              400,
              { __type: 'UnknownOperationException', message: action },
              type,
            );
          return send(response, 200, {}, type);
        } catch (error) {
          if (error instanceof TaskTokenError)
            return send(response, 400, { __type: error.type, message: error.message }, type);
          throw error;
        }
      }
      const parts = url.pathname.split('/').filter(Boolean);
      if (parts[0] !== 'local' || parts[1] !== 'state-machines') {
        return send(response, 404, { message: `no route ${request.method} ${url.pathname}` });
      }
      if (parts.length === 2 && request.method === 'GET') {
        return send(response, 200, { stateMachines: sfn.names() });
      }
      const [name, what, id] = parts.slice(2);
      if (name === undefined || !sfn.names().includes(name) || what !== 'executions') {
        return send(response, 404, {
          message: `state machine: one of ${sfn.names().join(', ')}, then /executions`,
        });
      }
      if (request.method === 'POST' && id === undefined) {
        const text = await readBody(request);
        let input: unknown;
        try {
          input = text.trim() === '' ? {} : JSON.parse(text);
        } catch {
          return send(response, 400, { message: 'body: the execution input, as JSON' });
        }
        let execution: Execution;
        try {
          execution = sfn.start(name, input);
        } catch (error) {
          if (!(error instanceof ValidationException)) throw error;
          return send(response, 400, { __type: error.name, message: error.message });
        }
        return send(response, 202, {
          executionArn: execution.executionArn,
          id: execution.name,
          status: execution.status,
          startDate: execution.startDate,
          location: `/local/state-machines/${name}/executions/${execution.name}`,
        });
      }
      if (request.method === 'GET' && id !== undefined) {
        const execution = sfn.get(name, id);
        if (!execution) return send(response, 404, { message: `no execution ${id} of ${name}` });
        return send(response, 200, execution);
      }
      return send(response, 405, { message: `${request.method} is not served here` });
    } catch (error) {
      send(response, 500, { message: error instanceof Error ? error.message : String(error) });
    }
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Invokes functions through serverless-offline's Lambda endpoint, as Step Functions would. */
export function lambdaInvoker(lambdaUrl: string, service = 'kafka-tally', stage = 'local'): Invoke {
  return async (functionName, payload) => {
    const response = await fetch(
      `${lambdaUrl}/2015-03-31/functions/${service}-${stage}-${functionName}/invocations`,
      { method: 'POST', body: JSON.stringify(payload ?? {}) },
    );
    const text = await response.text();
    const body = text === '' ? null : (JSON.parse(text) as unknown);
    const failed =
      response.headers.has('x-amz-function-error') ||
      (body !== null && typeof body === 'object' && 'errorType' in body && 'errorMessage' in body);
    if (!response.ok || failed) {
      const { errorType, errorMessage, trace } = (body ?? {}) as {
        errorType?: string;
        errorMessage?: string;
        trace?: string[];
      };
      // serverless-offline says "Error" for every error; Lambda says the error's name, which
      // Retry and Catch match on. The stack's first line still carries it.
      const named = /^([A-Za-z_$][\w$.]*): /.exec(trace?.[0] ?? '')?.[1];
      throw Object.assign(new Error(errorMessage ?? `invoke ${functionName}: ${response.status}`), {
        name: (errorType === 'Error' ? named : errorType) ?? errorType ?? 'Lambda.ServiceException',
      });
    }
    return body;
  };
}
