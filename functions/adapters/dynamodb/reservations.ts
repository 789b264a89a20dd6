import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Deadline } from '../../core/deadline.js';
import type { Reservation, Reservations } from '../../core/publish-ports.js';
import { dynamoDbUnavailable, within } from './client.js';

function toReservation(item: Record<string, unknown> | undefined): Reservation | undefined {
  if (item === undefined) return undefined;
  const { idempotencyKey, fingerprint, stream, topic, firstSeq, count, timestamp } = item;
  if (
    typeof idempotencyKey !== 'string' ||
    typeof fingerprint !== 'string' ||
    typeof stream !== 'string' ||
    typeof topic !== 'string' ||
    typeof firstSeq !== 'number' ||
    typeof count !== 'number' ||
    typeof timestamp !== 'number'
  ) {
    throw new Error(`reservation ${String(idempotencyKey)} is malformed`);
  }
  return { idempotencyKey, fingerprint, stream, topic, firstSeq, count, timestamp };
}

/** Idempotency-Key → the sequence numbers its request was given, kept for `ttlSeconds`. */
export function createReservations(
  client: DynamoDBDocumentClient,
  tableName: string,
  ttlSeconds: number,
): Reservations {
  const get = async (idempotencyKey: string, deadline?: Deadline) => {
    try {
      const { Item } = await client.send(
        new GetCommand({ TableName: tableName, Key: { idempotencyKey }, ConsistentRead: true }),
        within(deadline),
      );
      return toReservation(Item);
    } catch (error) {
      throw dynamoDbUnavailable('reading an Idempotency-Key reservation', error);
    }
  };
  return {
    get,
    async putIfAbsent(reservation, deadline) {
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...reservation,
              createdAt: new Date().toISOString(),
              expiresAt: Math.floor(Date.now() / 1000) + ttlSeconds,
            },
            ConditionExpression: 'attribute_not_exists(idempotencyKey)',
          }),
          within(deadline),
        );
        return reservation;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) {
          throw dynamoDbUnavailable('storing an Idempotency-Key reservation', error);
        }
      }
      const winner = await get(reservation.idempotencyKey, deadline);
      if (winner === undefined) throw new Error('reservation vanished after a conditional failure');
      return winner;
    },
  };
}
