import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { forEachBounded } from '../../core/shared/for-each-bounded.js';
import { dynamoDbUnavailable } from './client.js';

/** DynamoDB's BatchWriteItem takes at most 25 puts (and 16 MB: 25 items of 400 KB fit). */
const BATCH_WRITE_LIMIT = 25;
const ATTEMPTS = 5;

/**
 * Puts `items` (unconditionally) in batches of 25, `inFlight` batches at a time, sending
 * unprocessed items again with backoff; `doing` names the work in errors.
 */
export async function batchPut(
  client: DynamoDBDocumentClient,
  tableName: string,
  items: readonly Record<string, unknown>[],
  doing: string,
  inFlight = 4,
): Promise<void> {
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += BATCH_WRITE_LIMIT) {
    batches.push(items.slice(i, i + BATCH_WRITE_LIMIT));
  }
  await forEachBounded(batches, inFlight, async (batch) => {
    let requests = batch.map((Item) => ({ PutRequest: { Item } }));
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
