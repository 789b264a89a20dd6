import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  DAY_MARKS_OUTLIVE_MS,
  DAY_MS,
  type DayMark,
  dayMarksKey,
  expiresAtSeconds,
} from '../../core/publish/ledger-layout.js';
import type { Deadline } from '../../core/shared/deadline.js';
import { within } from './client.js';
import { readAll } from './read-all.js';

// A stream's day marks in the ledger table (core/publish/ledger-layout.ts): item (`stream#days`,
// day) holding the lowest first seq a publisher wrote that day. One conditional update per
// container, stream and day; a lost one only makes a 410's day less exact, so it never fails a
// publish (the next write of the day tries again).

export function createDayMarks(
  client: DynamoDBDocumentClient,
  tableName: string,
  retentionMs: number,
) {
  /** Stream → the day this container has marked it. */
  const marked = new Map<string, number>();
  return {
    async mark(stream: string, firstSeq: number, now: number, deadline?: Deadline): Promise<void> {
      const day = Math.floor(now / DAY_MS);
      if (marked.get(stream) === day) return;
      // Taken before the call: the container's other requests of the day do not mark again.
      marked.set(stream, day);
      try {
        await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { stream: dayMarksKey(stream), seq: day },
            UpdateExpression: 'SET firstSeq = :seq, expiresAt = :expires',
            ConditionExpression: 'attribute_not_exists(firstSeq) OR firstSeq > :seq',
            ExpressionAttributeValues: {
              ':seq': firstSeq,
              ':expires': expiresAtSeconds((day + 1) * DAY_MS, retentionMs + DAY_MARKS_OUTLIVE_MS),
            },
          }),
          within(deadline),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) marked.delete(stream);
      }
    },

    async read(stream: string): Promise<DayMark[]> {
      const items = await readAll(
        client,
        {
          query: {
            TableName: tableName,
            KeyConditionExpression: '#stream = :stream',
            ExpressionAttributeNames: { '#stream': 'stream' },
            ExpressionAttributeValues: { ':stream': dayMarksKey(stream) },
            ConsistentRead: true,
          },
        },
        `reading the day marks of stream ${stream}`,
      );
      return items.map((item) => ({ day: Number(item.seq), firstSeq: Number(item.firstSeq) }));
    },
  };
}
