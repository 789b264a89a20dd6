import { Logger } from '@aws-lambda-powertools/logger';
import { loadLogConfig } from './config.js';
import { tracing } from './tracing.js';

// One JSON line per event (Powertools Logger): level from LOG_LEVEL (or POWERTOOLS_LOG_LEVEL,
// read and checked by platform/config.ts: a bad one fails the cold start),
// the invocation's context and correlation ids on every line of it (`withCorrelation`). Record
// keys and values and credentials are never passed here: callers log names, counts and errors.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export const logger = new Logger({
  logLevel: loadLogConfig().level,
  serviceName:
    process.env.POWERTOOLS_SERVICE_NAME ?? process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'kafka-tally',
});

export function log(level: LogLevel, message: string, extra: object = {}): void {
  logger[level](message, extra as Record<string, unknown>);
}

/** Ids that tie one invocation's lines together: request id, execution, Idempotency-Key, … */
export interface Correlation {
  readonly requestId?: string | undefined;
  readonly execution?: string | undefined;
  readonly idempotencyKey?: string | undefined;
  readonly stream?: string | undefined;
}

/**
 * Adds ids to every later line of this invocation (keys are reset when it ends), and to its
 * trace as annotations when tracing is on (platform/tracing.ts).
 */
export function withCorrelation(ids: Correlation): void {
  const defined = Object.entries(ids).filter(([, value]) => typeof value === 'string');
  if (defined.length > 0) logger.appendKeys(Object.fromEntries(defined));
  tracing.annotate(ids);
}

/** JavaScript's own errors: a defect (Tally's or a library's), whose place is what helps. */
const DEFECTS = new Set(['TypeError', 'RangeError', 'ReferenceError', 'SyntaxError']);

/**
 * An error as a log field: its name and message, and its causes' (a 503 wrapping a kafkajs
 * TypeError says where that came from); for JavaScript's own errors the first frames of the
 * stack too. At most five causes deep.
 */
export function errorForLog(error: unknown, depth = 0): Record<string, unknown> | string {
  if (!(error instanceof Error)) return String(error);
  const fields: Record<string, unknown> = { name: error.name, message: error.message };
  if (DEFECTS.has(error.name) && error.stack) {
    fields.at = error.stack
      .split('\n')
      .filter((line) => line.trimStart().startsWith('at '))
      .slice(0, 4)
      .map((line) => line.trim());
  }
  if (error.cause !== undefined && depth < 5) fields.cause = errorForLog(error.cause, depth + 1);
  return fields;
}
