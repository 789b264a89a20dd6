import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SequenceAllocator, StreamCounter } from '../../core/publish/ports.js';
import type { Deadline } from '../../core/shared/deadline.js';
import { dynamoDbUnavailable, isDeadlineAbort, within } from './client.js';

/** Attempts of one allocation, all under the same name and all within the request's deadline. */
const ATTEMPTS = 3;

/** Worth another attempt: no answer, a throttle or a server error; not a refusal or the deadline. */
function transient(error: unknown): boolean {
  if (isDeadlineAbort(error)) return false;
  const { $metadata, $retryable } = error as {
    $metadata?: { httpStatusCode?: number };
    $retryable?: unknown;
  };
  const status = $metadata?.httpStatusCode;
  return status === undefined || status >= 500 || $retryable !== undefined;
}

/**
 * Dense per-stream sequence numbers across every container: one conditional update per request
 * reserves a block, whatever the number of records, in one round trip when DynamoDB answers.
 *
 * Each allocation is named (a random id) and written on the counter with the condition that the
 * counter's latest allocation is not that id. The adapter retries itself (the client given has
 * SDK retries off) with the same id, so a retry whose earlier attempt was applied but whose
 * answer was lost fails the condition, and the counter as it was (ALL_OLD) holds this
 * allocation's last seq: the retry returns those seqs instead of burning a second block.
 * Only the latest id is kept, so this covers a lost answer when no other allocation of the stream
 * came in between; otherwise the earlier attempt's seqs stay allocated and unused, a hole the
 * audit finds and marks VOID.
 */
export function createSequenceAllocator(
  client: DynamoDBDocumentClient,
  tableName: string,
): SequenceAllocator {
  return {
    async allocate(stream, count, topic, deadline) {
      const id = randomUUID();
      // Before the call: the counter's time for these seqs is no earlier than this.
      const allocatedAt = Date.now();
      let lastError: unknown;
      for (let attempt = 1; attempt <= ATTEMPTS && !deadline.expired(); attempt++) {
        try {
          const { Attributes } = await client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: { stream },
              UpdateExpression:
                'ADD lastSeq :count SET allocation = :id, updatedAt = :now, homeTopic = if_not_exists(homeTopic, :topic)',
              ConditionExpression: 'attribute_not_exists(allocation) OR allocation <> :id',
              ExpressionAttributeValues: {
                ':count': count,
                ':id': id,
                ':now': new Date(allocatedAt).toISOString(),
                ':topic': topic,
              },
              ReturnValues: 'UPDATED_NEW',
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
            within(deadline),
          );
          return {
            firstSeq: firstOf(stream, Attributes?.lastSeq, count),
            homeTopic: textOf(Attributes?.homeTopic),
            allocatedAt,
          };
        } catch (error) {
          if (error instanceof ConditionalCheckFailedException) {
            // An earlier attempt of this very allocation was applied. ALL_OLD comes marshalled.
            const old = error.Item
              ? {
                  allocation: error.Item.allocation?.S,
                  lastSeq: Number(error.Item.lastSeq?.N),
                  homeTopic: error.Item.homeTopic?.S,
                }
              : // DynamoDB APIs without ALL_OLD on a failed condition (dynalite): read it.
                await counterItem(client, tableName, stream, deadline).catch(() => undefined);
            if (old?.allocation === id) {
              return {
                firstSeq: firstOf(stream, old.lastSeq, count),
                homeTopic: textOf(old.homeTopic),
                allocatedAt,
              };
            }
            // Moved on since: that attempt's seqs are spent (the audit voids them); apply again.
            lastError = error;
            continue;
          }
          lastError = error;
          if (!transient(error)) break;
          await new Promise((resolve) =>
            setTimeout(resolve, Math.min(50 * attempt, deadline.remainingMs())),
          );
        }
      }
      throw dynamoDbUnavailable(
        `allocating ${count} sequence numbers of stream ${stream}`,
        lastError ?? new DOMException('deadline already passed', 'AbortError'),
      );
    },
  };
}

const textOf = (value: unknown) => (typeof value === 'string' ? value : undefined);

function firstOf(stream: string, last: unknown, count: number): number {
  if (typeof last !== 'number' || !Number.isSafeInteger(last)) {
    throw new Error(`stream ${stream}: counter has no lastSeq`);
  }
  return last - count + 1;
}

async function counterItem(
  client: DynamoDBDocumentClient,
  tableName: string,
  stream: string,
  deadline: Deadline | undefined,
): Promise<Record<string, unknown> | undefined> {
  const { Item } = await client.send(
    new GetCommand({ TableName: tableName, Key: { stream }, ConsistentRead: true }),
    within(deadline),
  );
  return Item;
}

/** The counter's state: how far a stream's seqs were allocated, and when last. */
export function createStreamCounter(
  client: DynamoDBDocumentClient,
  tableName: string,
): StreamCounter {
  return {
    async read(stream, deadline) {
      let item: Record<string, unknown> | undefined;
      try {
        item = await counterItem(client, tableName, stream, deadline);
      } catch (error) {
        throw dynamoDbUnavailable(`reading the counter of stream ${stream}`, error);
      }
      if (typeof item?.lastSeq !== 'number') return undefined;
      const updatedAt = typeof item.updatedAt === 'string' ? Date.parse(item.updatedAt) : 0;
      const homeTopic = textOf(item.homeTopic);
      return { lastSeq: item.lastSeq, updatedAt, ...(homeTopic !== undefined && { homeTopic }) };
    },
  };
}
