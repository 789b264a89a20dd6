import { gunzipSync, gzipSync } from 'node:zlib';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { KeyedPublish, KeyedPublishes } from '../../core/publish/ports.js';
import type { Deadline } from '../../core/shared/deadline.js';
import { dynamoDbUnavailable, within } from './client.js';

/**
 * Answers above this are stored gzipped: a 1,000-entry batch answer with long ids, stream and key
 * is ~590 KB of JSON, over DynamoDB's 400 KB item, and an answer that cannot be stored would
 * leave every retry to run again.
 */
const PACK_ABOVE = 64 * 1024;

function toKeyed(item: Record<string, unknown> | undefined): KeyedPublish | undefined {
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
  const answer =
    item.answerGz instanceof Uint8Array
      ? JSON.parse(gunzipSync(item.answerGz).toString('utf8'))
      : typeof item.answer === 'string'
        ? JSON.parse(item.answer)
        : undefined;
  return {
    idempotencyKey,
    fingerprint,
    stream,
    topic,
    firstSeq,
    count,
    timestamp,
    // Items written before the lock existed (plain reservations) are unlocked.
    lockedUntil: typeof item.lockedUntil === 'number' ? item.lockedUntil : 0,
    ...(answer !== undefined && { answer }),
  };
}

/**
 * Idempotency-Key → one item holding the request's reservation (its seqs), its lock and, once
 * settled, its stored answer; kept for `ttlSeconds`. Every write is a single-item conditional
 * write: the lock is compared by its value (`lockedUntil`), so a late write of a request whose
 * lock was taken over changes nothing.
 */
export function createKeyedPublishes(
  client: DynamoDBDocumentClient,
  tableName: string,
  ttlSeconds: number,
): KeyedPublishes {
  const unavailable = (doing: string, error: unknown) =>
    dynamoDbUnavailable(`${doing} the Idempotency-Key; nothing was sent`, error);
  const get = async (idempotencyKey: string, deadline?: Deadline) => {
    try {
      const { Item } = await client.send(
        new GetCommand({ TableName: tableName, Key: { idempotencyKey }, ConsistentRead: true }),
        within(deadline),
      );
      return toKeyed(Item);
    } catch (error) {
      throw unavailable('checking', error);
    }
  };
  return {
    get,

    async claim(item, deadline) {
      const { answer: _none, ...stored } = item;
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...stored,
              createdAt: new Date().toISOString(),
              expiresAt: Math.floor(Date.now() / 1000) + ttlSeconds,
            },
            ConditionExpression: 'attribute_not_exists(idempotencyKey)',
            // DynamoDB sends the item that is there with the refusal: a replay that claims
            // first needs no second round trip (dynalite sends none: it is read then).
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
          within(deadline),
        );
        return item;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) {
          throw unavailable('storing the reservation of', error);
        }
        if (error.Item !== undefined) {
          const sent = toKeyed(unmarshall(error.Item));
          if (sent !== undefined) return sent;
        }
      }
      const winner = await get(item.idempotencyKey, deadline);
      if (winner === undefined) throw new Error('reservation vanished after a conditional failure');
      return winner;
    },

    async lock(idempotencyKey, seenUntil, until, deadline) {
      try {
        await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { idempotencyKey },
            UpdateExpression: 'SET lockedUntil = :until',
            ConditionExpression:
              'attribute_exists(idempotencyKey) AND attribute_not_exists(answer) AND attribute_not_exists(answerGz) AND ' +
              (seenUntil === 0
                ? '(attribute_not_exists(lockedUntil) OR lockedUntil = :seen)'
                : 'lockedUntil = :seen'),
            ExpressionAttributeValues: { ':until': until, ':seen': seenUntil },
          }),
          within(deadline),
        );
        return true;
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return false;
        throw unavailable('locking', error);
      }
    },

    async finish(idempotencyKey, heldUntil, answer, deadline) {
      let stored: Record<string, unknown> = {};
      if (answer !== undefined) {
        const json = JSON.stringify(answer);
        stored = json.length > PACK_ABOVE ? { answerGz: gzipSync(json) } : { answer: json };
      }
      const names = Object.keys(stored);
      try {
        await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { idempotencyKey },
            UpdateExpression: `SET lockedUntil = :free${names.map((n) => `, ${n} = :${n}`).join('')}`,
            ConditionExpression: 'lockedUntil = :held',
            ExpressionAttributeValues: {
              ':free': 0,
              ':held': heldUntil,
              ...Object.fromEntries(names.map((n) => [`:${n}`, stored[n]])),
            },
          }),
          within(deadline),
        );
        return true;
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return false;
        throw dynamoDbUnavailable('storing the answer of an Idempotency-Key', error);
      }
    },
  };
}
