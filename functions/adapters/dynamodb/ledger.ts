import { randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import type { Ledger, LedgerBlock, LedgerVersion } from '../../core/publish/ports.js';
import type { Deadline } from '../../core/shared/deadline.js';
import { decodeOutcome, type EncodedOutcome, encodeOutcome } from '../../core/shared/outcomes.js';
import { dynamoDbUnavailable, within } from './client.js';
import { forEachPage } from './read-all.js';

/**
 * Outcomes as JSON text, gzipped above this size: a block of thousands of records repeats the
 * same few messages, and DynamoDB refuses items over 400 KB (10,000 UNKNOWN outcomes are ~590 KB
 * of text, a few KB gzipped).
 */
const COMPRESS_ABOVE_BYTES = 32 * 1024;

/** The index of blocks by write time (stream, updatedAt; keys only): infra/resources/tables.yml. */
export const BY_WRITE_TIME_INDEX = 'byWriteTime';
/** Keys one BatchGetItem may ask for. */
const BATCH_GET_KEYS = 100;

function outcomesAttribute(block: LedgerBlock): Record<string, string | Uint8Array> {
  const json = JSON.stringify(block.outcomes.map(encodeOutcome));
  return json.length > COMPRESS_ABOVE_BYTES ? { outcomesGz: gzipSync(json) } : { outcomes: json };
}

function toBlock(stream: string, item: Record<string, unknown>): LedgerBlock {
  const text =
    item.outcomesGz instanceof Uint8Array
      ? gunzipSync(item.outcomesGz).toString('utf8')
      : String(item.outcomes);
  const encoded = JSON.parse(text) as EncodedOutcome[];
  return {
    stream,
    firstSeq: Number(item.seq),
    topic: String(item.topic),
    session: String(item.session),
    idempotencyKey: typeof item.idempotencyKey === 'string' ? item.idempotencyKey : undefined,
    outcomes: encoded.map(decodeOutcome),
    ...(typeof item.updatedAt === 'string' && { writtenAt: Date.parse(item.updatedAt) }),
    version: typeof item.version === 'string' ? item.version : '',
  };
}

interface Condition {
  readonly expression: string;
  /** DynamoDB refuses names and values an expression does not use. */
  readonly names: Record<string, string>;
  readonly values?: Record<string, string>;
}

/** The condition under which a write lands `over` a version (see Ledger.write). */
function expecting(over: LedgerVersion): Condition {
  const seq = { '#seq': 'seq' };
  if (over === 'absent') return { expression: 'attribute_not_exists(#seq)', names: seq };
  if (over === '') {
    return {
      expression: 'attribute_exists(#seq) AND attribute_not_exists(#version)',
      names: { ...seq, '#version': 'version' },
    };
  }
  return {
    expression: '#version = :version',
    names: { '#version': 'version' },
    values: { ':version': over },
  };
}

/**
 * The publish ledger: one item per request's block of sequence numbers, keyed (stream, first
 * seq), holding each record's outcome in compact form.
 */
export function createLedger(client: DynamoDBDocumentClient, tableName: string): Ledger {
  /**
   * Puts the block's item under a new version, under `condition` when given: the version, or
   * undefined when the condition refused it. A VOID block carries `voided`, the attribute a
   * publisher's first write is conditioned on.
   */
  async function put(
    block: LedgerBlock,
    deadline: Deadline | undefined,
    condition?: Condition,
  ): Promise<string | undefined> {
    const voided = block.outcomes.every((o) => o.status === 'VOID');
    const version = randomUUID();
    try {
      await client.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            stream: block.stream,
            seq: block.firstSeq,
            count: block.outcomes.length,
            lastSeq: block.firstSeq + block.outcomes.length - 1,
            topic: block.topic,
            session: block.session,
            idempotencyKey: block.idempotencyKey,
            ...outcomesAttribute(block),
            ...(voided && { voided: true }),
            updatedAt: new Date().toISOString(),
            version,
          },
          ...(condition && {
            ConditionExpression: condition.expression,
            ExpressionAttributeNames: condition.names,
            ...(condition.values && { ExpressionAttributeValues: condition.values }),
          }),
        }),
        within(deadline),
      );
      return version;
    } catch (error) {
      if (condition && error instanceof ConditionalCheckFailedException) return undefined;
      throw dynamoDbUnavailable(`recording seqs ${block.firstSeq}.. of ${block.stream}`, error);
    }
  }

  return {
    write: (block, deadline, over) =>
      put(block, deadline, over === undefined ? undefined : expecting(over)),

    async open(block, deadline) {
      const version = await put(block, deadline, {
        expression: 'attribute_not_exists(#seq) OR attribute_not_exists(voided)',
        names: { '#seq': 'seq' },
      });
      return version === undefined ? 'voided' : { version };
    },

    void: async (block, deadline) =>
      (await put(block, deadline, expecting('absent'))) !== undefined,
    fill: async (block, deadline) =>
      (await put(block, deadline, expecting('absent'))) !== undefined,

    async find(stream, seq, deadline) {
      let items: Record<string, unknown>[] | undefined;
      try {
        ({ Items: items } = await client.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: '#stream = :stream AND #seq <= :seq',
            ExpressionAttributeNames: { '#stream': 'stream', '#seq': 'seq' },
            ExpressionAttributeValues: { ':stream': stream, ':seq': seq },
            ScanIndexForward: false,
            Limit: 1,
            ConsistentRead: true,
          }),
          within(deadline),
        ));
      } catch (error) {
        throw dynamoDbUnavailable(`looking up seq ${seq} of stream ${stream}`, error);
      }
      const item = items?.[0];
      if (item === undefined || typeof item.seq !== 'number' || typeof item.count !== 'number') {
        return undefined;
      }
      if (seq >= item.seq + item.count) return undefined;
      return toBlock(stream, item);
    },

    async forEachBlock(stream, onBlock) {
      await forEachPage(
        client,
        {
          query: {
            TableName: tableName,
            KeyConditionExpression: '#stream = :stream',
            ExpressionAttributeNames: { '#stream': 'stream' },
            ExpressionAttributeValues: { ':stream': stream },
            ConsistentRead: true,
          },
        },
        `reading the ledger of stream ${stream}`,
        (items) => {
          for (const item of items) onBlock(toBlock(stream, item));
        },
      );
    },

    /** Keys from the write-time index (eventually consistent), then the items, consistently. */
    async forEachChangedBlock(stream: string, since: number, onBlock: (b: LedgerBlock) => void) {
      const doing = `reading the ledger of stream ${stream} written since ${new Date(since).toISOString()}`;
      const seqs: number[] = [];
      await forEachPage(
        client,
        {
          query: {
            TableName: tableName,
            IndexName: BY_WRITE_TIME_INDEX,
            KeyConditionExpression: '#stream = :stream AND #updatedAt >= :since',
            ExpressionAttributeNames: { '#stream': 'stream', '#updatedAt': 'updatedAt' },
            ExpressionAttributeValues: {
              ':stream': stream,
              ':since': new Date(since).toISOString(),
            },
          },
        },
        doing,
        (items) => {
          for (const item of items) seqs.push(Number(item.seq));
        },
      );
      for (let i = 0; i < seqs.length; i += BATCH_GET_KEYS) {
        let keys: Record<string, unknown>[] | undefined = seqs
          .slice(i, i + BATCH_GET_KEYS)
          .map((seq) => ({ stream, seq }));
        for (let attempt = 0; keys !== undefined && keys.length > 0; attempt++) {
          if (attempt > 0)
            await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
          let answer: BatchGetCommandOutput;
          try {
            answer = await client.send(
              new BatchGetCommand({
                RequestItems: { [tableName]: { Keys: keys, ConsistentRead: true } },
              }),
            );
          } catch (error) {
            throw dynamoDbUnavailable(doing, error);
          }
          for (const item of answer.Responses?.[tableName] ?? []) onBlock(toBlock(stream, item));
          keys = answer.UnprocessedKeys?.[tableName]?.Keys;
          if (attempt >= 8 && keys !== undefined && keys.length > 0)
            throw dynamoDbUnavailable(doing, new Error(`${keys.length} keys left unprocessed`));
        }
      }
    },
  };
}
