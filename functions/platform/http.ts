import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { type Caller, requireScope, type Scope } from '../core/shared/access.js';
import { TallyError } from '../core/shared/errors.js';
import { loadAuthenticate } from './auth.js';
import type { HttpEvent, HttpResponse } from './http-event.js';
import { errorForLog, log, logger, withCorrelation } from './log.js';
import { tracing } from './tracing.js';

/** A route: its event, Lambda's context and the caller httpHandler authenticated. */
export type HttpRoute = (
  event: HttpEvent,
  context: Context,
  caller: Caller,
) => Promise<HttpResponse>;

export function json(
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): HttpResponse {
  return {
    statusCode,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  };
}

/** Our errors to a JSON error body; anything else is a 500 without details. */
export function errorResponse(error: unknown, requestId: string | undefined): HttpResponse {
  if (error instanceof TallyError) {
    const headers: Record<string, string> =
      error.retryAfterSeconds === undefined
        ? {}
        : { 'retry-after': String(error.retryAfterSeconds) };
    return json(
      error.status,
      {
        error_code: error.errorCode,
        message: error.message,
        retriable: error.retriable,
        ...(error.field && { field: error.field }),
      },
      headers,
    );
  }
  // middy ends an invocation just before Lambda's timeout (timeoutEarly): whatever was in flight
  // has an unknown outcome. On the write-ahead path its ledger block already says UNKNOWN (opened
  // before the send); on the fast path no block was written before the send, and the outcome
  // write may not have landed: the stream's counter shows the seqs were allocated, and the audit
  // finds them in the log (UNKNOWN, then settled) or records them VOID past its horizon.
  if (
    error instanceof Error &&
    error.name === 'TimeoutError' &&
    error.message.includes('AbortError')
  ) {
    return json(504, {
      error_code: 504,
      message:
        'the function ran out of time; records of this request may have been sent: look them up by Idempotency-Key or stream and seq',
      outcome: 'UNKNOWN',
      retriable: true,
    });
  }
  return json(500, {
    error_code: 500,
    message: `internal error; quote request id ${requestId ?? 'unknown'}`,
    retriable: true,
  });
}

function errorsToHttp(): MiddlewareObj<HttpEvent, HttpResponse> {
  return {
    onError: async (request) => {
      const { error } = request;
      request.response = errorResponse(error, request.context.awsRequestId);
      const status = request.response.statusCode ?? 500;
      log(status >= 500 ? 'error' : 'info', 'request failed', {
        route: request.event.routeKey,
        requestId: request.context.awsRequestId,
        status,
        error: errorForLog(error),
      });
    },
  };
}

/** Every log line of the request carries API Gateway's request id (publish adds its key). */
function correlation(): MiddlewareObj<HttpEvent, HttpResponse> {
  return {
    before: async (request) => {
      withCorrelation({ requestId: request.event.requestContext?.requestId });
    },
  };
}

/**
 * The one middy stack of every HTTP route: its trace (TALLY_TRACING), log context, errors as
 * JSON, and who may call it.
 * How callers are authenticated (TALLY_AUTH, TALLY_AUTH_TOKENS) is read when the function's
 * module loads: a bad configuration fails the cold start, naming the variable. The route is
 * given the authenticated caller, after its scope was checked (401 / 403 before the route).
 */
export function httpHandler(scope: Scope, route: HttpRoute) {
  const authenticate = loadAuthenticate();
  return middy<HttpEvent, HttpResponse>()
    .use(tracing.middlewares())
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(correlation())
    .use(errorsToHttp())
    .handler(async (event, context) => {
      const who = authenticate(event);
      requireScope(who, scope);
      return route(event, context, who);
    });
}
