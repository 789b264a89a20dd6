import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DoneRange } from '../../core/once/done-ranges.js';
import type {
  LaneRanges,
  MarkKey,
  OnceStore,
  PendingDelete,
  StoredMark,
  StreamRanges,
} from '../../core/once/run-once.js';
import { forEachBounded } from '../../core/shared/for-each-bounded.js';
import { murmur2 } from '../../core/shared/murmur2.js';
import { dynamoDbUnavailable } from './client.js';
import { conditional, deleteIfStill, overVersion } from './conditional.js';
import { forEachPage } from './read-all.js';

// The once guard's marks, one table: pk `group#stream` (or `group#` + `\u0000key` for records
// deduplicated by a caller's key), sk `m#<seq>` / `k#<key>` for a per-record mark (CLAIMED with
// its expiry and holder's token, or DONE with its time), `r#<topic-partition>` for a partition's
// folded ranges and the folds whose marks are still to delete (JSON, versioned). Every write is one conditional single-item write: no
// transactions, no TTL.

const BATCH_WRITE_LIMIT = 25;

const keyOf = (at: MarkKey) =>
  'seq' in at
    ? { pk: `${at.group}#${at.stream}`, sk: `m#${at.seq}` }
    : { pk: `${at.group}#\u0000key`, sk: `k#${at.key}` };

/** Partition keys of the `byPruneAt` index per group: a busy group's keyed marks spread over them. */
export const PRUNE_SPREAD = 8;
export const PRUNE_INDEX = 'byPruneAt';
/** Conditional deletes (BatchWriteItem takes no conditions) in flight at once. */
const DELETES_IN_FLIGHT = 16;
const encoder = new TextEncoder();

/**
 * A keyed mark's place in the `byPruneAt` index (a caller's key has no seq to fold into ranges):
 * its group and spread, and `pruneAt` — a claim's expiry, then the time it was marked done — so
 * the marks past the horizon are read by a range, not found among every mark kept.
 */
const pruneKeyOf = (group: string, key: string) =>
  `${group}#${(murmur2(encoder.encode(key)) & 0x7fffffff) % PRUNE_SPREAD}`;

function markOf(item: Record<string, unknown>): StoredMark {
  return {
    state: item.state === 'DONE' ? 'DONE' : 'CLAIMED',
    lane: String(item.lane),
    expiresAt: Number(item.expiresAt ?? 0),
    doneAt: Number(item.doneAt ?? 0),
  };
}

/** DynamoDB's answer to a Query of an index the table does not have. */
const isMissingIndex = (error: unknown) =>
  error instanceof Error && error.name === 'ValidationException' && /index/i.test(error.message);

export function createOnceStore(client: DynamoDBDocumentClient, tableName: string): OnceStore {
  let indexMissing = false;
  const query = (pk: string, prefix: string) => ({
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
    ConsistentRead: true,
  });
  return {
    async read(group, stream): Promise<StreamRanges> {
      const lanes = new Map<string, LaneRanges>();
      await forEachPage(
        client,
        { query: query(`${group}#${stream}`, 'r#') },
        `reading once-ranges of ${group} for ${stream}`,
        (items) => {
          for (const item of items) {
            lanes.set(String(item.sk).slice(2), {
              ranges: JSON.parse(String(item.ranges)) as DoneRange[],
              pending: JSON.parse(String(item.pending ?? '[]')) as PendingDelete[],
              version: Number(item.version),
            });
          }
        },
      );
      return lanes;
    },

    async marks(group, stream, { deadBefore, limit, skip }) {
      const found: Array<readonly [number, StoredMark]> = [];
      await forEachPage(
        client,
        { query: query(`${group}#${stream}`, 'm#') },
        `reading once-marks of ${group} for ${stream}`,
        (items) => {
          for (const item of items) {
            const seq = Number(String(item.sk).slice(2));
            const mark = markOf(item);
            const due = mark.state === 'DONE' || mark.expiresAt < deadBefore;
            if (due && !skip(seq) && found.length < limit) found.push([seq, mark]);
          }
        },
        () => found.length >= limit,
      );
      return found;
    },

    async claim(at, { token, lane, expiresAt, now }) {
      const key = keyOf(at);
      let held: Record<string, unknown> | undefined;
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...key,
              ...('key' in at && { pruneKey: pruneKeyOf(at.group, at.key), pruneAt: expiresAt }),
              state: 'CLAIMED',
              token,
              lane,
              expiresAt,
            },
            // Free, or a claim whose holder let it lapse (died, or timed out): taken over.
            ConditionExpression:
              'attribute_not_exists(pk) OR (#state = :claimed AND expiresAt < :now)',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':claimed': 'CLAIMED', ':now': now },
            // What holds it comes back with the refusal (DynamoDB; a local API may not say).
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return 'claimed';
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException))
          throw dynamoDbUnavailable(`claiming ${key.pk} ${key.sk}`, error);
        held = error.Item && unmarshall(error.Item);
      }
      if (held !== undefined) return held.state === 'DONE' ? 'done' : 'held';
      let item: Record<string, unknown> | undefined;
      try {
        ({ Item: item } = await client.send(
          new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }),
        ));
      } catch (error) {
        throw dynamoDbUnavailable(`reading the claim on ${key.pk} ${key.sk}`, error);
      }
      // Gone since (released): held for now, the record is asked for again.
      return item?.state === 'DONE' ? 'done' : 'held';
    },

    finish(at, token, now) {
      const key = keyOf(at);
      return conditional(
        () =>
          client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: key,
              UpdateExpression: `SET #state = :done, doneAt = :now${'key' in at ? ', pruneAt = :now' : ''} REMOVE expiresAt`,
              ConditionExpression: '#token = :token',
              ExpressionAttributeNames: { '#state': 'state', '#token': 'token' },
              ExpressionAttributeValues: { ':done': 'DONE', ':now': now, ':token': token },
            }),
          ),
        `marking ${key.pk} ${key.sk} done`,
      );
    },

    async release(at, token) {
      const key = keyOf(at);
      await conditional(
        () =>
          client.send(
            new DeleteCommand({
              TableName: tableName,
              Key: key,
              ConditionExpression: '#token = :token AND #state = :claimed',
              ExpressionAttributeNames: { '#token': 'token', '#state': 'state' },
              ExpressionAttributeValues: { ':token': token, ':claimed': 'CLAIMED' },
            }),
          ),
        `releasing ${key.pk} ${key.sk}`,
      );
    },

    saveRanges(group, stream, lane, ranges, version) {
      return conditional(
        () =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: {
                pk: `${group}#${stream}`,
                sk: `r#${lane}`,
                ranges: JSON.stringify(ranges.ranges),
                pending: JSON.stringify(ranges.pending),
                version: version + 1,
              },
              ...overVersion(version, 'pk'),
            }),
          ),
        `saving once-ranges of ${group} for ${stream} on ${lane}`,
      );
    },

    async pruneKeyed(group, before, limit) {
      let pruned = 0;
      if (indexMissing) return pruned;
      for (let spread = 0; spread < PRUNE_SPREAD && pruned < limit; spread++) {
        let page: { Items?: Array<Record<string, unknown>> | undefined };
        try {
          page = await client.send(
            new QueryCommand({
              TableName: tableName,
              IndexName: PRUNE_INDEX,
              KeyConditionExpression: 'pruneKey = :key AND pruneAt < :before',
              ExpressionAttributeValues: { ':key': `${group}#${spread}`, ':before': before },
              Limit: limit - pruned,
            }),
          );
        } catch (error) {
          // A table created before the index (packages/consumer's README): marks kept, as before.
          if (isMissingIndex(error)) {
            indexMissing = true;
            return pruned;
          }
          throw dynamoDbUnavailable(`reading ${group}'s keyed once-marks past the horizon`, error);
        }
        // Only if unchanged since the index showed it: a claim taken over meanwhile is kept.
        await forEachBounded(page.Items ?? [], DELETES_IN_FLIGHT, async (item) => {
          const removed = await deleteIfStill(
            client,
            {
              tableName,
              key: { pk: item.pk, sk: item.sk },
              attribute: 'pruneAt',
              value: item.pruneAt,
            },
            `pruning ${String(item.pk)} ${String(item.sk)}`,
          );
          if (removed) pruned++;
        });
      }
      return pruned;
    },

    async dropMarks(group, stream, seqs) {
      // Unconditional: only marks folded into saved ranges, or dead for the horizon, are named.
      for (let i = 0; i < seqs.length; i += BATCH_WRITE_LIMIT) {
        let requests = seqs.slice(i, i + BATCH_WRITE_LIMIT).map((seq) => ({
          DeleteRequest: { Key: keyOf({ group, stream, seq }) },
        }));
        for (let attempt = 0; requests.length > 0 && attempt < 5; attempt++) {
          try {
            const { UnprocessedItems } = await client.send(
              new BatchWriteCommand({ RequestItems: { [tableName]: requests } }),
            );
            requests = (UnprocessedItems?.[tableName] ?? []) as typeof requests;
          } catch (error) {
            throw dynamoDbUnavailable(`deleting folded once-marks of ${group}`, error);
          }
        }
      }
    },
  };
}
