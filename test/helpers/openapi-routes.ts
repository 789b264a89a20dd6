import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

// The httpApi routes serverless.yml declares: which module's handler serves each, and the
// scopes its authorizer requires. The OpenAPI tests and the integration tests' hook read them.

export interface ServerlessRoute {
  /** `GET /v3/clusters/{cluster_id}`, as API Gateway's routeKey. */
  readonly routeKey: string;
  /** The handler's module, `functions/publish/produce-handler`. */
  readonly module: string;
  readonly scopes: readonly string[];
}

interface HttpApiEvent {
  readonly httpApi?: {
    readonly method: string;
    readonly path: string;
    readonly authorizer?: { readonly scopes?: readonly string[] };
  };
}

const ROOT = join(import.meta.dirname, '..', '..');

export function serverlessRoutes(): ServerlessRoute[] {
  const yml = parse(readFileSync(join(ROOT, 'serverless.yml'), 'utf8'), { logLevel: 'silent' }) as {
    functions: Record<string, { handler: string; events?: HttpApiEvent[] }>;
  };
  return Object.values(yml.functions).flatMap((fn) =>
    (fn.events ?? []).flatMap(({ httpApi }) =>
      httpApi === undefined
        ? []
        : [
            {
              routeKey: `${httpApi.method.toUpperCase()} ${httpApi.path}`,
              module: fn.handler.slice(0, fn.handler.lastIndexOf('.')),
              scopes: httpApi.authorizer?.scopes ?? [],
            },
          ],
    ),
  );
}
