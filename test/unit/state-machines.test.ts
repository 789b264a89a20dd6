import { readFileSync } from 'node:fs';
import aslValidator from 'asl-validator';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import * as errors from '../../functions/core/shared/errors.js';
import { functionOfTask, loadDefinitions } from '../../infra/local/step-functions.js';

// The definitions of infra/state-machines/ are valid ASL, call functions serverless.yml declares,
// and retry or catch only errors that exist: our error classes' names, Step Functions' own, and
// the approval's rejection.
const definitions = loadDefinitions();
const serverless = parse(
  readFileSync(new URL('../../serverless.yml', import.meta.url), 'utf8'),
) as {
  functions: Record<string, { handler: string }>;
  stepFunctions: { stateMachines: Record<string, { name: string; definition: string }> };
};
const ourErrors = new Set(
  Object.values(errors)
    .filter((value) => typeof value === 'function' && value.prototype instanceof errors.TallyError)
    .map((value) => (value as { name: string }).name),
);

type State = Record<string, unknown> & { Type: string };
function allStates(definition: unknown): Array<[string, State]> {
  const states = Object.entries((definition as { States: Record<string, State> }).States);
  return states.flatMap(([name, state]) => [
    [name, state] as [string, State],
    ...(state.ItemProcessor ? allStates(state.ItemProcessor) : []),
  ]);
}

describe('state machines', () => {
  it('are the four workflows, each wired into serverless.yml from its file', () => {
    const names = ['audit-fan-out', 'offset-repair', 'publish-and-verify', 'reconcile-fan-out'];
    expect(Object.keys(definitions).sort()).toEqual(names);
    const wired = Object.values(serverless.stepFunctions.stateMachines).map((m) => m.definition);
    expect(wired.sort()).toEqual(
      names.map((name) => `\${file(infra/state-machines/${name}.asl.json)}`),
    );
  });

  for (const [name, definition] of Object.entries(definitions)) {
    describe(name, () => {
      it('is valid ASL (asl-validator, paths and ARNs checked)', () => {
        const result = aslValidator(structuredClone(definition), {
          checkPaths: true,
          checkArn: true,
        });
        expect(result.errorsText('\n')).toBe('');
        expect(result.isValid).toBe(true);
      });

      it('calls only functions serverless.yml declares', () => {
        const tasks = allStates(definition).filter(([, s]) => s.Type === 'Task');
        expect(tasks.length).toBeGreaterThan(0);
        for (const [state, task] of tasks) {
          const fn = functionOfTask(task);
          expect(fn, state).toBeDefined();
          expect(Object.keys(serverless.functions), state).toContain(fn);
          expect(task.TimeoutSeconds, `${state} sets its own timeout`).toBeTypeOf('number');
        }
      });

      it('retries and catches errors by names that exist, with backoff', () => {
        for (const [state, s] of allStates(definition)) {
          const retriers = (s.Retry ?? []) as Array<Record<string, unknown>>;
          const catchers = (s.Catch ?? []) as Array<Record<string, unknown>>;
          for (const rule of [...retriers, ...catchers]) {
            for (const error of rule.ErrorEquals as string[]) {
              const known =
                ourErrors.has(error) ||
                error.startsWith('States.') ||
                error.startsWith('Lambda.') ||
                error === 'ApprovalRejected';
              expect(known, `${state}: ${error}`).toBe(true);
            }
          }
          for (const retrier of retriers) {
            expect(retrier.BackoffRate, state).toBeGreaterThan(1);
            const retriable = (retrier.ErrorEquals as string[]).filter((e) => ourErrors.has(e));
            for (const error of retriable) {
              const Class = (errors as Record<string, unknown>)[error] as new (
                m: string,
              ) => {
                retriable: boolean;
              };
              expect(new Class('x').retriable, `${state} retries ${error}`).toBe(true);
            }
          }
        }
      });
    });
  }
});
