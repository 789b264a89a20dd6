import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, afterEach, vi } from 'vitest';
import { serverlessRoutes } from './openapi-routes.js';
import { type Answer, createExchangeChecker } from './openapi-validate.js';

// The integration tests' check that the OpenAPI document cannot drift: every in-process call of
// an HTTP handler is checked against functions/openapi/document.ts — the answer always, the
// request when the answer is 2xx (see openapi-validate.ts). A departure throws from the handler
// call, naming the route, the status and the schema error, and fails the test in afterEach too,
// in case the test caught it.
//
// The hook wraps what @middy/core's middy() returns when platform/http.ts's httpHandler calls it,
// not http.ts itself: a mocked module survives vi.resetModules, so a mocked http.ts would keep the
// core/shared/errors.js it first loaded and turn every TallyError of a re-imported handler into a 500.
// @middy/core is an external package, loaded once per worker anyway, and knows none of our types.

const routes = serverlessRoutes();
const checker = createExchangeChecker();
const departures: string[] = [];
/** Exchanges checked, by route and status: TALLY_OPENAPI_REPORT=1 prints them per test file. */
const checkedCount: Record<string, Record<string, number>> = {};

/** The module (`functions/x/y`) whose top level is calling httpHandler, from the call's stack. */
function callingModule(stack: string | undefined): string | undefined {
  for (const line of (stack ?? '').split('\n').slice(2)) {
    const found = /(functions\/[\w/-]+)\.[jt]s\b/.exec(line);
    if (found && !found[1]?.startsWith('functions/platform/')) return found[1];
  }
  return undefined;
}

type Middy = typeof import('@middy/core').default;
type Instance = ReturnType<Middy>;
const CHAINED = new Set(['use', 'before', 'after', 'onError', 'handler']);

function checked(instance: Instance, candidates: readonly string[]): Instance {
  const proxy: Instance = new Proxy(instance, {
    apply: async (target, self, [event, context]: [APIGatewayProxyEventV2, unknown]) => {
      const answer = (await Reflect.apply(target, self, [event, context])) as Answer;
      const { routeKey, problems } = checker.check(
        event,
        answer,
        candidates.length > 0 ? candidates : checker.routes.map((r) => r.routeKey),
      );
      const byStatus = checkedCount[routeKey] ?? {};
      checkedCount[routeKey] = byStatus;
      byStatus[String(answer.statusCode)] = (byStatus[String(answer.statusCode)] ?? 0) + 1;
      if (problems.length > 0) {
        const message = `OpenAPI: ${routeKey} answered ${answer.statusCode}, which departs from functions/openapi/document.ts:\n  ${problems.join('\n  ')}`;
        departures.push(message);
        throw new Error(message);
      }
      return answer;
    },
    // middy's chained methods return the instance: keep returning the checked one.
    get: (target, property) => {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function' || !CHAINED.has(String(property))) return value;
      return (...args: unknown[]) => {
        const result: unknown = value(...args);
        return result === target ? proxy : result;
      };
    },
  });
  return proxy;
}

vi.mock('@middy/core', async (importOriginal) => {
  const middy = (await importOriginal<{ default: Middy }>()).default;
  const wrapped = (...args: Parameters<Middy>): Instance => {
    const instance = middy(...args);
    const stack = new Error().stack;
    // Only the HTTP stack (httpHandler); task handlers' middy() is left alone.
    if (!stack?.includes('functions/platform/http.')) return instance;
    const module = callingModule(stack);
    return checked(
      instance,
      routes.filter((r) => r.module === module).map((r) => r.routeKey),
    );
  };
  return { default: wrapped };
});

afterEach(() => {
  const found = departures.splice(0);
  if (found.length > 0) throw new Error(found.join('\n'));
});

afterAll(() => {
  if (process.env.TALLY_OPENAPI_REPORT) {
    process.stderr.write(`openapi: exchanges checked ${JSON.stringify(checkedCount)}\n`);
  }
});
