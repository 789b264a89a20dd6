import { describe, expect, it } from 'vitest';
import { DependencyFailedError, InvalidInputError } from '../../../functions/core/shared/errors.js';
import { taskHandler } from '../../../functions/platform/task.js';
import { lambdaContext } from '../../helpers/http-event.js';

describe('taskHandler', () => {
  it('fails a run that outlives the Lambda deadline as a retriable DependencyFailedError', async () => {
    const handler = taskHandler(() => new Promise<never>(() => {}));
    const error = await handler({}, lambdaContext(50)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyFailedError);
    expect(error).toMatchObject({
      name: 'DependencyFailedError',
      retriable: true,
      message: 'the task did not finish before the Lambda deadline; running it again is safe',
    });
  });

  it('rethrows the task’s own errors unchanged, so Retry/Catch match their names', async () => {
    const refused = new InvalidInputError('topic: required', { field: 'topic' });
    const handler = taskHandler(async () => {
      throw refused;
    });
    await expect(handler({}, lambdaContext())).rejects.toBe(refused);
  });
});
