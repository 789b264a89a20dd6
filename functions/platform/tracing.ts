import type { Tracer } from '@aws-lambda-powertools/tracer';
import type { MiddlewareObj } from '@middy/core';
import { ConfigurationError, TallyError } from '../core/shared/errors.js';
import { loadTracingConfig } from './config.js';

// X-Ray tracing through Powertools' Tracer, off unless TALLY_TRACING=true. The tracer is not in
// any bundle: it comes from the Powertools Lambda layer, which serverless.yml attaches only when
// tracing is on, and is imported at init only then. Off, nothing is imported and every hook
// below is a no-op. The rest of the code knows only this seam (through http.ts, task.ts, log.ts
// and the SDK client factories).

type TracerModule = typeof import('@aws-lambda-powertools/tracer');
type TraceSegment = NonNullable<ReturnType<Tracer['getSegment']>>;

/**
 * The only values a trace is annotated with: the logger's correlation ids. Anything else given
 * to `annotate` is dropped, so record keys, values and secrets cannot reach X-Ray by this path.
 */
export const TRACE_ANNOTATIONS = ['requestId', 'execution', 'idempotencyKey', 'stream'] as const;
export type TraceIds = { readonly [K in (typeof TRACE_ANNOTATIONS)[number]]?: string | undefined };

export interface Tracing {
  readonly enabled: boolean;
  /**
   * For middy's `use`, outermost in a stack: none when off; on, one middleware that opens a
   * subsegment per invocation (`## <handler>`), annotated with ColdStart and Service, and with
   * the error that ended it (a fault for 5xx and unexpected errors, an error flag for a 4xx).
   */
  middlewares<TEvent, TResult>(): Array<MiddlewareObj<TEvent, TResult>>;
  /** Annotates the running invocation's subsegment with its correlation ids. */
  annotate(ids: TraceIds): void;
  /** An AWS SDK v3 client whose calls are traced as subsegments (the client itself). */
  captureClient<Client extends object>(client: Client): Client;
}

const OFF: Tracing = {
  enabled: false,
  middlewares: () => [],
  annotate: () => {},
  captureClient: (client) => client,
};

/** A Tracing: OFF when disabled (`load` is never called), else the loaded tracer behind it. */
export function createTracing(
  enabled: boolean,
  load: () => Promise<TracerModule>,
  serviceName: string,
): Tracing {
  if (!enabled) return OFF;
  let ready: Tracer | undefined;
  const loading = load().then(
    (module) => {
      ready = new module.Tracer({ serviceName });
      return ready;
    },
    (error: unknown) => {
      throw new ConfigurationError(
        'TALLY_TRACING is true but @aws-lambda-powertools/tracer cannot be imported: attach the Powertools layer (serverless.yml does when TALLY_TRACING=true at packaging) or set TALLY_TRACING=false',
        { field: 'TALLY_TRACING', cause: error },
      );
    },
  );
  // A failed import fails the first invocation (the middleware awaits it), not the process.
  loading.catch(() => {});

  const open = new WeakMap<object, { parent: TraceSegment; segment: TraceSegment }>();
  let current: TraceSegment | undefined;

  const close = (tracer: Tracer, request: object) => {
    const opened = open.get(request);
    if (opened === undefined) return;
    open.delete(request);
    try {
      opened.segment.close();
    } catch {
      // A subsegment that cannot be closed or sent is lost; the invocation is not.
    }
    tracer.setSegment(opened.parent);
    if (current === opened.segment) current = undefined;
  };

  return {
    enabled: true,
    middlewares: <TEvent, TResult>(): Array<MiddlewareObj<TEvent, TResult>> => [
      {
        before: async (request) => {
          const tracer = await loading;
          if (!tracer.isTracingEnabled()) return;
          const parent = tracer.getSegment();
          if (parent === undefined) return;
          const segment = parent.addNewSubsegment(`## ${process.env._HANDLER ?? 'handler'}`);
          open.set(request, { parent, segment });
          current = segment;
          tracer.setSegment(segment);
          tracer.annotateColdStart();
          tracer.addServiceNameAnnotation();
        },
        after: async (request) => {
          if (ready) close(ready, request);
        },
        onError: async (request) => {
          const opened = open.get(request);
          if (ready === undefined || opened === undefined) return;
          const { error } = request;
          // An HTTP stack has already turned the error into its response (errorsToHttp).
          const status =
            (request.response as { statusCode?: number } | undefined)?.statusCode ??
            (error instanceof TallyError ? error.status : 500);
          if (status < 500) opened.segment.addErrorFlag();
          else ready.addErrorAsMetadata(error instanceof Error ? error : new Error(String(error)));
          close(ready, request);
        },
      },
    ],
    annotate: (ids) => {
      if (current === undefined) return;
      for (const key of TRACE_ANNOTATIONS) {
        const value = ids[key];
        if (typeof value === 'string') current.addAnnotation(key, value);
      }
    },
    captureClient: (client) => {
      if (ready) ready.captureAWSv3Client(client);
      else loading.then((tracer) => tracer.captureAWSv3Client(client)).catch(() => {});
      return client;
    },
  };
}

/** This container's tracing, from TALLY_TRACING (a bad value fails the cold start). */
export const tracing = createTracing(
  loadTracingConfig().enabled,
  () => import('@aws-lambda-powertools/tracer'),
  process.env.POWERTOOLS_SERVICE_NAME ?? process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'kafka-tally',
);
