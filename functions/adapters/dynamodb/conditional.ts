import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { dynamoDbUnavailable } from './client.js';

/**
 * Runs one conditional write or delete: true when it happened, false when its condition kept
 * the stored item (another run got there first); anything else is a dependency failure.
 */
export async function conditional(work: () => Promise<unknown>, doing: string): Promise<boolean> {
  try {
    await work();
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw dynamoDbUnavailable(doing, error);
  }
}
