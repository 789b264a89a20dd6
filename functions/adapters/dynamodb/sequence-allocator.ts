import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SequenceAllocator } from '../../core/publish-ports.js';
import { dynamoDbUnavailable } from './client.js';

/**
 * Dense per-stream sequence numbers across every container: one atomic ADD per request reserves
 * a block, whatever the number of records.
 */
export function createSequenceAllocator(
  client: DynamoDBDocumentClient,
  tableName: string,
): SequenceAllocator {
  return {
    async allocate(stream, count) {
      let attributes: Record<string, unknown> | undefined;
      try {
        ({ Attributes: attributes } = await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { stream },
            UpdateExpression: 'ADD lastSeq :count SET updatedAt = :now',
            ExpressionAttributeValues: { ':count': count, ':now': new Date().toISOString() },
            ReturnValues: 'UPDATED_NEW',
          }),
        ));
      } catch (error) {
        throw dynamoDbUnavailable(
          `allocating ${count} sequence numbers of stream ${stream}`,
          error,
        );
      }
      const last = attributes?.lastSeq;
      if (typeof last !== 'number') throw new Error(`stream ${stream}: counter has no lastSeq`);
      return last - count + 1;
    },
  };
}
