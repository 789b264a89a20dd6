import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { DependencyFailedError, TallyError } from '../core/shared/errors.js';
import { errorForLog, log, logger, withCorrelation } from './log.js';
import { tracing } from './tracing.js';

/**
 * The one middy stack for non-HTTP entry points (EventBridge schedules, Step Functions tasks):
 * traced (TALLY_TRACING); errors are logged and rethrown unchanged, so Step Functions
 * Retry/Catch match on their `name`.
 * A run that middy ends just before Lambda's timeout fails as a retriable DependencyFailedError
 * (middy's own error is a plain `TimeoutError` no Retry matches).
 */
export function taskHandler<TInput, TOutput>(
  run: (input: TInput, context: Context) => Promise<TOutput>,
) {
  return middy<TInput, TOutput>({
    timeoutEarlyResponse: () => {
      throw new DependencyFailedError(
        'the task did not finish before the Lambda deadline; running it again is safe',
      );
    },
  })
    .use(tracing.middlewares())
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use({
      // A Step Functions task that is given its execution (`"execution.$": "$$.Execution.Id"`)
      // tags every line of the run with it.
      before: async (request) => {
        const execution = (request.event as { execution?: unknown } | null)?.execution;
        if (typeof execution === 'string') withCorrelation({ execution });
      },
      onError: async (request) => {
        const { error } = request;
        // Bad input is the caller's to fix (a warning); anything else is ours or a dependency's.
        const level = error instanceof TallyError && error.status < 500 ? 'warn' : 'error';
        log(level, 'task failed', {
          requestId: request.context.awsRequestId,
          error: errorForLog(error),
        });
      },
    })
    .handler(run);
}
