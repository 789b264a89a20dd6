import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { GatewayAnswer } from './gateway-limits.js';

// Which requests reach a function at all. serverless-offline answers a path no route takes with
// its own HTML-ish route dump, and a known path with another method with a 404; locally the front
// answers both in Tally's error shape instead (404, and 405 with Allow). In AWS, API Gateway's
// HTTP API answers both itself: 404 `{"message":"Not Found"}` (docs/api.md).

const SERVERLESS_YML = fileURLToPath(new URL('../../serverless.yml', import.meta.url));

/** `GET /v3/clusters/{cluster_id}`: API Gateway's routeKey. */
export type RouteKey = string;

/** The httpApi routes of serverless.yml, as routeKeys. */
export function readHttpRoutes(): RouteKey[] {
  const config = parse(readFileSync(SERVERLESS_YML, 'utf8'), { logLevel: 'silent' }) as {
    functions: Record<string, { events?: Array<{ httpApi?: { method: string; path: string } }> }>;
  };
  return Object.values(config.functions).flatMap((fn) =>
    (fn.events ?? []).flatMap(({ httpApi }) =>
      httpApi ? [`${httpApi.method.toUpperCase()} ${httpApi.path}`] : [],
    ),
  );
}

/** A route's path as a pattern: `{name}` is one segment, `{name+}` the rest. */
function pathPattern(path: string): RegExp {
  const source = path
    .split(/(\{[^}]+\})/)
    .map((part) => {
      if (/^\{[^}]+\+\}$/.test(part)) return '.+';
      if (/^\{[^}]+\}$/.test(part)) return '[^/]+';
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${source}/?$`);
}

function refusal(
  status: number,
  message: string,
  limit: GatewayAnswer['limit'],
  headers?: Record<string, string>,
): GatewayAnswer {
  return {
    status,
    body: JSON.stringify({ error_code: status, message, retriable: false }),
    limit,
    ...(headers && { headers }),
  };
}

/**
 * The answer for a request no route takes, or undefined when one does: 404 for a path no route
 * has, 405 with `Allow` for a path whose routes take other methods.
 */
export function routeRefusal(
  routes: readonly RouteKey[],
  method: string,
  target: string,
): GatewayAnswer | undefined {
  const path = new URL(target, 'http://localhost').pathname;
  const allowed = new Set<string>();
  for (const key of routes) {
    const space = key.indexOf(' ');
    const routeMethod = key.slice(0, space);
    if (!pathPattern(key.slice(space + 1)).test(path)) continue;
    if (routeMethod === 'ANY' || routeMethod === method.toUpperCase()) return undefined;
    allowed.add(routeMethod);
  }
  if (allowed.size === 0) {
    return refusal(
      404,
      `no route ${method.toUpperCase()} ${path}: Tally's routes are listed in GET /openapi.json (docs/api.md)`,
      'route-not-found',
    );
  }
  const allow = [...allowed].sort().join(', ');
  return refusal(
    405,
    `${path} does not take ${method.toUpperCase()}; it takes ${allow}`,
    'method-not-allowed',
    { allow },
  );
}
