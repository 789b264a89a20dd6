// AWS's payload limits, enforced by the local Step Functions runner so that a workflow that would
// fail in AWS fails here too (issue 13: Reconcile's result passed locally and failed in AWS).
//
// Step Functions (service quotas; error handling, "States.DataLimitExceeded"): a task's result, a
// state's input after Parameters and a state's output may be at most 262,144 bytes, as UTF-8 of
// their JSON. The error is documented as terminal: States.ALL does not catch or retry it; a
// catcher or retrier that names it does (as LocalStack's AWS-recorded tests show it caught). The
// runner takes the documented, stricter reading, so nothing that only works here passes here.
// StartExecution refuses a larger input outright (ValidationException: no execution starts).
//
// Lambda (quotas): a synchronous invocation's request may be at most 6 MB (6,291,456 bytes) and
// its response 6,291,556 bytes (Lambda's own figure in Function.ResponseSizeTooLarge).

/** Calls one of serverless.yml's functions (by its key there) with a payload. */
export type Invoke = (functionName: string, payload: unknown) => Promise<unknown>;

export const STATE_PAYLOAD_LIMIT = 262_144;
export const LAMBDA_REQUEST_LIMIT = 6_291_456;
export const LAMBDA_RESPONSE_LIMIT = 6_291_556;

/** Bytes of a value as Step Functions and Lambda count them: UTF-8 of its JSON. */
export function payloadBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');
}

/**
 * `States.DataLimitExceeded`, shaped as the ASL interpreter's own runtime errors: Catch and
 * Retry honour `isCatchable`/`isRetryable` before matching a name or States.ALL.
 */
export class DataLimitExceeded extends Error {
  override readonly name = 'States.DataLimitExceeded';
  constructor(
    message: string,
    readonly isCatchable = false,
    readonly isRetryable = false,
  ) {
    super(message);
  }
}

const names = (rules: unknown) =>
  Array.isArray(rules)
    ? rules.flatMap((r) => (r as { ErrorEquals?: string[] }).ErrorEquals ?? [])
    : [];

/** What a Task state's payload check throws: caught or retried only where it is named. */
export function taskLimitError(state: Record<string, unknown>, message: string) {
  return new DataLimitExceeded(
    message,
    names(state.Catch).includes('States.DataLimitExceeded'),
    names(state.Retry).includes('States.DataLimitExceeded'),
  );
}

/** AWS's words for a result over the limit, naming the state or task. */
export const resultTooLarge = (what: string) =>
  `The state/task '${what}' returned a result with a size exceeding the maximum number of bytes service limit.`;

/** Throws unless `value` fits in `limit` bytes. */
export function within(value: unknown, limit: number, error: (bytes: number) => Error): void {
  const bytes = payloadBytes(value);
  if (bytes > limit) throw error(bytes);
}

/** `invoke` as Lambda's synchronous invoke limits it: a request or response over 6 MB fails. */
export function lambdaLimits(invoke: Invoke): Invoke {
  return async (functionName, payload) => {
    within(payload, LAMBDA_REQUEST_LIMIT, (bytes) =>
      Object.assign(
        new Error(
          `${bytes} byte payload is too large for the RequestResponse invocation type (limit ${LAMBDA_REQUEST_LIMIT} bytes)`,
        ),
        { name: 'Lambda.RequestEntityTooLargeException' },
      ),
    );
    const result = await invoke(functionName, payload);
    within(result, LAMBDA_RESPONSE_LIMIT, () =>
      Object.assign(
        new Error(
          `Response payload size exceeded maximum allowed payload size (${LAMBDA_RESPONSE_LIMIT} bytes).`,
        ),
        { name: 'Function.ResponseSizeTooLarge' },
      ),
    );
    return result;
  };
}

interface StateEvents {
  dispatchStateExitedEvent(name: string, type: string, input: unknown, output: unknown): void;
}

const patched = new WeakSet<object>();

/**
 * Makes every state's output (after ResultSelector, ResultPath and OutputPath) count against the
 * limit. The interpreter reports a state's exit from inside its run loop, after the state's own
 * Catch had its chance and before the next state starts: an error thrown there fails the
 * execution (or the Map iteration, and then its Map) uncaught, as the terminal error it is.
 * `events` is any of the interpreter's event loggers; all share the prototype patched here.
 */
export function limitStateOutputs(events: object): void {
  const prototype = Object.getPrototypeOf(events) as StateEvents;
  if (patched.has(prototype)) return;
  patched.add(prototype);
  const exited = prototype.dispatchStateExitedEvent;
  prototype.dispatchStateExitedEvent = function (this: StateEvents, name, type, input, output) {
    within(output, STATE_PAYLOAD_LIMIT, () => new DataLimitExceeded(resultTooLarge(name)));
    exited.call(this, name, type, input, output);
  };
}
