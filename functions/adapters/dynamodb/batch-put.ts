import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { forEachBounded } from '../../core/shared/for-each-bounded.js';
import { dynamoDbUnavailable } from './client.js';

/** DynamoDB's BatchWriteItem takes at most 25 puts or deletes (and 16 MB: 25 items of 400 KB fit). */
const BATCH_WRITE_LIMIT = 25;
const ATTEMPTS = 5;

type WriteRequest =
  | { PutRequest: { Item: Record<string, unknown> } }
  | { DeleteRequest: { Key: Record<string, unknown> } };

/**
 * Puts `items` (unconditionally) in batches of 25, `inFlight` batches at a time, sending
 * unprocessed items again with backoff; `doing` names the work in errors.
 */
export function batchPut(
  client: DynamoDBDocumentClient,
  tableName: string,
  items: readonly Record<string, unknown>[],
  doing: string,
  inFlight = 4,
): Promise<void> {
  const requests = items.map((Item) => ({ PutRequest: { Item } }));
  return batchWrite(client, tableName, requests, doing, inFlight);
}

/** Deletes the items at `keys` (unconditionally), in batches as `batchPut` puts. */
export function batchDelete(
  client: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly Record<string, unknown>[],
  doing: string,
  inFlight = 4,
): Promise<void> {
  const requests = keys.map((Key) => ({ DeleteRequest: { Key } }));
  return batchWrite(client, tableName, requests, doing, inFlight);
}

async function batchWrite(
  client: DynamoDBDocumentClient,
  tableName: string,
  all: readonly WriteRequest[],
  doing: string,
  inFlight: number,
): Promise<void> {
  const batches: WriteRequest[][] = [];
  for (let i = 0; i < all.length; i += BATCH_WRITE_LIMIT) {
    batches.push(all.slice(i, i + BATCH_WRITE_LIMIT));
  }
  await forEachBounded(batches, inFlight, async (batch) => {
    let requests = batch;
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt === ATTEMPTS) {
        throw dynamoDbUnavailable(`${doing} (items left unprocessed)`, new Error('throttled'));
      }
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      try {
        const { UnprocessedItems } = await client.send(
          new BatchWriteCommand({ RequestItems: { [tableName]: requests } }),
        );
        requests = (UnprocessedItems?.[tableName] ?? []) as typeof requests;
      } catch (error) {
        throw dynamoDbUnavailable(doing, error);
      }
    }
  });
}
