import {
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  SFNClient,
  SFNServiceException,
} from '@aws-sdk/client-sfn';
import { ConflictError, DependencyUnavailableError } from '../../core/errors.js';

/** Errors Step Functions answers when nobody waits on a token any more. */
const GONE = new Set(['TaskTimedOut', 'TaskDoesNotExist', 'InvalidToken']);

/**
 * Completes a workflow's waiting task (the `.waitForTaskToken` pattern): in AWS through Step
 * Functions, locally through the `npm start` stack's Step Functions endpoint.
 */
export function createTaskTokens(options: { region: string; endpoint: string | undefined }) {
  const client = new SFNClient({
    region: options.region,
    maxAttempts: 2,
    requestHandler: { connectionTimeout: 3000, requestTimeout: 5000, throwOnRequestTimeout: true },
    ...(options.endpoint && {
      endpoint: options.endpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  });
  const send = async (doing: string, command: SendTaskSuccessCommand | SendTaskFailureCommand) => {
    try {
      await client.send(command as SendTaskSuccessCommand);
    } catch (error) {
      if (error instanceof SFNServiceException && GONE.has(error.name)) {
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
        new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(output) }),
      ),
    fail: (taskToken: string, error: string, cause: string) =>
      send('the rejection', new SendTaskFailureCommand({ taskToken, error, cause })),
  };
}

export type TaskTokens = ReturnType<typeof createTaskTokens>;
