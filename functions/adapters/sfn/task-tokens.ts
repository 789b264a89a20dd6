import type { SendTaskFailureCommand, SendTaskSuccessCommand } from '@aws-sdk/client-sfn';
import { ConflictError, DependencyUnavailableError } from '../../core/shared/errors.js';
import { type CaptureClient, lazySdkClient } from '../aws/lazy-sdk-client.js';

/** Errors Step Functions answers when nobody waits on a token any more. */
const GONE = new Set(['TaskTimedOut', 'TaskDoesNotExist', 'InvalidToken']);

/**
 * Completes a workflow's waiting task (the `.waitForTaskToken` pattern): in AWS through Step
 * Functions, locally through the `npm start` stack's Step Functions endpoint. The SDK client is
 * loaded by the first decision, not at cold start: listing and requesting approvals never use it.
 */
export function createTaskTokens(options: {
  region: string;
  endpoint: string | undefined;
  /** What the composition root does to the SDK client (its tracing). */
  captureClient: CaptureClient;
}) {
  const load = lazySdkClient(
    options,
    () => import('@aws-sdk/client-sfn'),
    (module, config) => new module.SFNClient(config),
    options.captureClient,
  );
  const send = async (
    doing: string,
    command: (
      m: typeof import('@aws-sdk/client-sfn'),
    ) => SendTaskSuccessCommand | SendTaskFailureCommand,
  ) => {
    const { client, module } = await load();
    try {
      await client.send(command(module) as SendTaskSuccessCommand);
    } catch (error) {
      if (error instanceof module.SFNServiceException && GONE.has(error.name)) {
        throw new ConflictError(
          `token: the workflow is no longer waiting for this decision (${error.name})`,
          { field: 'token', cause: error },
        );
      }
      throw new DependencyUnavailableError(`Step Functions did not take ${doing}`, {
        cause: error,
      });
    }
  };
  return {
    succeed: (taskToken: string, output: object) =>
      send(
        'the approval',
        (m) => new m.SendTaskSuccessCommand({ taskToken, output: JSON.stringify(output) }),
      ),
    fail: (taskToken: string, error: string, cause: string) =>
      send('the rejection', (m) => new m.SendTaskFailureCommand({ taskToken, error, cause })),
  };
}
