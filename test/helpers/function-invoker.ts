import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { Invoke } from '../../infra/local/payload-limits.js';
import { lambdaContext } from './http-event.js';

const serverless = parse(
  readFileSync(new URL('../../serverless.yml', import.meta.url), 'utf8'),
) as {
  functions: Record<string, { handler: string }>;
};

type Module = Record<string, (event: unknown, context: unknown) => Promise<unknown>>;

// Spelled out: Vite resolves only literal dynamic imports. The functions Task states call.
const MODULES: Record<string, () => Promise<unknown>> = {
  'functions/audit/task-handler': () => import('../../functions/audit/task-handler.js'),
  'functions/reconcile/task-handler': () => import('../../functions/reconcile/task-handler.js'),
  'functions/reconcile/fan-out-plan': () => import('../../functions/reconcile/fan-out-plan.js'),
  'functions/reconcile/fan-out-child': () => import('../../functions/reconcile/fan-out-child.js'),
  'functions/reconcile/fan-out-merge': () => import('../../functions/reconcile/fan-out-merge.js'),
  'functions/workflows/publish-record': () => import('../../functions/workflows/publish-record.js'),
  'functions/workflows/repair-tasks': () => import('../../functions/workflows/repair-tasks.js'),
  'functions/workflows/request-approval': () =>
    import('../../functions/workflows/request-approval.js'),
  'functions/workflows/verify-published': () =>
    import('../../functions/workflows/verify-published.js'),
};

/**
 * Calls serverless.yml's functions in this process (as their Lambda would, with a context of
 * 15 minutes), by the handler each one names: what Step Functions' Task states invoke.
 */
export function inProcessInvoker(calls: string[] = []): Invoke {
  return async (functionName, payload) => {
    const fn = serverless.functions[functionName];
    if (!fn) throw new Error(`serverless.yml has no function ${functionName}`);
    const dot = fn.handler.lastIndexOf('.');
    const load = MODULES[fn.handler.slice(0, dot)];
    if (!load) throw new Error(`${fn.handler}: add its module to MODULES`);
    const module = (await load()) as Module;
    const handler = module[fn.handler.slice(dot + 1)];
    if (!handler) throw new Error(`${fn.handler}: no such export`);
    calls.push(functionName);
    return handler(payload, lambdaContext(900_000));
  };
}
