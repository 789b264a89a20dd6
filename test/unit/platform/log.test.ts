import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { httpEvent, lambdaContext, testAuthEnv } from '../../helpers/http-event.js';

// Powertools Logger behind log(): every line of an invocation carries its context and
// correlation ids, and none of them leaks into the next invocation.
describe('log lines of an invocation', () => {
  let lines: Array<Record<string, unknown>>;

  beforeEach(() => {
    for (const [name, value] of Object.entries(testAuthEnv())) vi.stubEnv(name, value);
    vi.resetModules();
    lines = [];
    for (const stream of [process.stdout, process.stderr]) {
      vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown) => {
        const text = String(chunk);
        if (text.startsWith('{"level":')) lines.push(JSON.parse(text));
        return true;
      }) as typeof stream.write);
    }
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
    // Unit files share a worker's modules (isolate: false): a log.js that failed to load, or
    // loaded at another level, must not be what the next file imports.
    vi.resetModules();
  });

  it('carry the request id, the Lambda context and, for a task, its execution; then reset', async () => {
    const { log } = await import('../../../functions/platform/log.js');
    const { httpHandler } = await import('../../../functions/platform/http.js');
    const { taskHandler } = await import('../../../functions/platform/task.js');
    const route = httpHandler('read', async () => {
      log('info', 'inside the route', { n: 1 });
      return { statusCode: 200, body: '{}' };
    });
    const event = httpEvent();
    const context = lambdaContext();
    await route(event, context);
    const task = taskHandler(async (_input: { execution: string }) => {
      log('info', 'inside the task');
      return 'done';
    });
    const execution = 'arn:aws:states:us-east-1:000000000000:execution:offset-repair:e-1';
    await task({ execution }, lambdaContext());
    await route(httpEvent(), lambdaContext());
    log('info', 'outside any invocation');

    const [inRoute, inTask, inSecondRoute, outside] = lines;
    expect(inRoute).toMatchObject({
      level: 'INFO',
      message: 'inside the route',
      n: 1,
      requestId: event.requestContext.requestId,
      function_request_id: context.awsRequestId,
      function_name: 'tally-test',
    });
    expect(inTask).toMatchObject({ message: 'inside the task', execution });
    expect(inTask).not.toHaveProperty('requestId');
    expect(inSecondRoute?.requestId).not.toBe(event.requestContext.requestId);
    expect(inSecondRoute).not.toHaveProperty('execution');
    expect(outside).not.toHaveProperty('requestId');
    expect(outside).not.toHaveProperty('execution');
  });

  it("a failed request's line names each cause, and where a JavaScript error was thrown", async () => {
    const { httpHandler } = await import('../../../functions/platform/http.js');
    const { DependencyUnavailableError } = await import('../../../functions/core/shared/errors.js');
    // What kafkajs threw under load once: a TypeError inside metadata, wrapped in a 503.
    const route = httpHandler('publish', async () => {
      let inner: unknown;
      try {
        (undefined as unknown as { partitions: () => void }).partitions();
      } catch (error) {
        inner = error;
      }
      throw new DependencyUnavailableError(
        'Kafka metadata for t failed (TypeError); nothing was sent',
        {
          cause: inner,
        },
      );
    });
    const answer = await route(httpEvent(), lambdaContext());
    expect(answer.statusCode).toBe(503);
    const failed = lines.find((line) => line.message === 'request failed');
    const error = failed?.error as { name: string; cause?: Record<string, unknown> };
    expect(error).toMatchObject({ name: 'DependencyUnavailableError' });
    expect(error).not.toHaveProperty('at');
    expect(error.cause).toMatchObject({
      name: 'TypeError',
      message: expect.stringMatching(/reading 'partitions'/),
    });
    expect(error.cause?.at).toEqual(
      expect.arrayContaining([expect.stringMatching(/log\.test\.ts:\d+/)]),
    );
  });

  it('follows LOG_LEVEL', async () => {
    vi.stubEnv('LOG_LEVEL', 'WARN');
    const { log } = await import('../../../functions/platform/log.js');
    log('info', 'not shown');
    log('warn', 'shown');
    expect(lines.map((l) => l.message)).toEqual(['shown']);
  });

  it('takes LOG_LEVEL in either case (Powertools alone logs `debug` at INFO)', async () => {
    vi.stubEnv('LOG_LEVEL', 'debug');
    const { log, logger } = await import('../../../functions/platform/log.js');
    log('debug', 'a debug line');
    expect(logger.getLevelName()).toBe('DEBUG');
    expect(lines.map((l) => l.message)).toEqual(['a debug line']);
  });

  it('lets POWERTOOLS_LOG_LEVEL win over LOG_LEVEL, as Powertools does', async () => {
    vi.stubEnv('LOG_LEVEL', 'debug');
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'Error');
    const { log } = await import('../../../functions/platform/log.js');
    log('warn', 'not shown');
    log('error', 'shown');
    expect(lines.map((l) => l.message)).toEqual(['shown']);
  });

  it.each([
    ['LOG_LEVEL', 'verbose'],
    ['POWERTOOLS_LOG_LEVEL', 'warning'],
  ])('fails the cold start on %s=%s, naming the variable', async (name, value) => {
    vi.stubEnv(name, value);
    await expect(import('../../../functions/platform/log.js')).rejects.toMatchObject({
      name: 'ConfigurationError',
      field: name,
      message: expect.stringContaining(`${name} must be one of TRACE, DEBUG, INFO`),
    });
  });
});
