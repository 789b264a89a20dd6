import { randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DeleteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  type QueryCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import {
  type Ledger,
  type LedgerBlock,
  type LedgerVersion,
  MAX_VOID_RANGE_SEQS,
} from '../../core/publish/ports.js';
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
 *
 * VOID ranges. The audit records a run of unsent seqs [from, to] as ONE item at `from` (a block
 * of VOID outcomes, `voided`), so one write gives a whole hole its fate. A hole is not always
 * whole allocations: a lease is carved into requests' blocks, so a request (a retry of a key,
 * hours later) may open a block at any seq inside a range, where no key of the range's is. With
 * single-item conditions only, each side writes first and reads the other after, consistently:
 * - the audit puts the range where nothing starts at `from` (A1), then looks for a block starting
 *   in from+1..to (A2) and, finding one, ends the range before it (A3);
 * - a publisher's open puts its block unless a VOID starts at its first seq `s` (P1), then looks
 *   below `s` for a VOID range holding `s` (P2) and, finding one, deletes its block and sends
 *   nothing.
 * If P1 lands before A2, A2 sees the block and the range ends below `s`; otherwise A1 came before
 * P1, hence before P2, and P2 sees the range. So no seq is both VOID and sent. P2 reads down from
 * `s`, past blocks opened since the range (they may hide it), to the first item written before
 * the audit could judge `s` (`judgedFrom`): a range is written after that, and ended before any
 * block written before it. An open whose P1 has landed before `judgedFrom` skips P2: any range
 * holding `s` is written after it, so its A2 sees the block.
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

  /** The first seq of a block starting in from..to, read consistently. */
  async function firstBlockWithin(
    stream: string,
    from: number,
    to: number,
    deadline: Deadline | undefined,
  ): Promise<number | undefined> {
    try {
      const { Items } = await client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: '#stream = :stream AND #seq BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#stream': 'stream', '#seq': 'seq' },
          ExpressionAttributeValues: { ':stream': stream, ':from': from, ':to': to },
          ProjectionExpression: '#seq',
          Limit: 1,
          ConsistentRead: true,
        }),
        within(deadline),
      );
      const seq = Items?.[0]?.seq;
      return typeof seq === 'number' ? seq : undefined;
    } catch (error) {
      throw dynamoDbUnavailable(`reading the ledger of ${stream} within ${from}..${to}`, error);
    }
  }

  /**
   * Whether a VOID range starting below `seq` holds it: the items below, newest seq first, up
   * to the first written before `judgedFrom` (no range holding `seq` is older than that, and a
   * range is ended before any block written before it) or MAX_VOID_RANGE_SEQS below.
   */
  async function coveredByVoid(
    stream: string,
    seq: number,
    judgedFrom: number | undefined,
    deadline: Deadline,
  ): Promise<boolean> {
    if (seq <= 1) return false;
    const doing = `looking for a VOID range holding seq ${seq} of ${stream}`;
    const oldBefore = judgedFrom === undefined ? '' : new Date(judgedFrom).toISOString();
    let start: Record<string, unknown> | undefined;
    do {
      let answer: QueryCommandOutput;
      try {
        answer = await client.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: '#stream = :stream AND #seq BETWEEN :low AND :below',
            ExpressionAttributeNames: {
              '#stream': 'stream',
              '#seq': 'seq',
              '#lastSeq': 'lastSeq',
              '#voided': 'voided',
              '#updatedAt': 'updatedAt',
            },
            ExpressionAttributeValues: {
              ':stream': stream,
              ':low': Math.max(1, seq - MAX_VOID_RANGE_SEQS),
              ':below': seq - 1,
            },
            ProjectionExpression: '#seq, #lastSeq, #voided, #updatedAt',
            ScanIndexForward: false,
            ConsistentRead: true,
            Limit: 25,
            ...(start && { ExclusiveStartKey: start }),
          }),
          within(deadline),
        );
      } catch (error) {
        throw dynamoDbUnavailable(doing, error);
      }
      for (const item of answer.Items ?? []) {
        if (item.voided === true && Number(item.lastSeq) >= seq) return true;
        if (typeof item.updatedAt === 'string' && item.updatedAt < oldBefore) return false;
      }
      start = answer.LastEvaluatedKey;
    } while (start !== undefined);
    return false;
  }

  return {
    write: (block, deadline, over) =>
      put(block, deadline, over === undefined ? undefined : expecting(over)),

    async open(block, deadline, judgedFrom) {
      const version = await put(block, deadline, {
        expression: 'attribute_not_exists(#seq) OR attribute_not_exists(voided)',
        names: { '#seq': 'seq' },
      });
      if (version === undefined) return 'voided';
      // Landed before the audit may judge its seqs: any range holding them comes later, and its
      // own read after (A2) finds this block.
      if (judgedFrom !== undefined && Date.now() < judgedFrom) return { version };
      if (!(await coveredByVoid(block.stream, block.firstSeq, judgedFrom, deadline)))
        return { version };
      // A VOID range written before this block holds its seqs: nothing is sent, and the block
      // goes so that the seqs keep that one fate.
      try {
        await client.send(
          new DeleteCommand({
            TableName: tableName,
            Key: { stream: block.stream, seq: block.firstSeq },
            ConditionExpression: '#version = :version',
            ExpressionAttributeNames: { '#version': 'version' },
            ExpressionAttributeValues: { ':version': version },
          }),
          within(deadline),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) {
          throw dynamoDbUnavailable(
            `taking back block ${block.firstSeq} of ${block.stream}, inside a VOID range: nothing was sent`,
            error,
          );
        }
      }
      return 'voided';
    },

    async void(block, deadline) {
      const version = await put(block, deadline, expecting('absent'));
      if (version === undefined) return 0;
      const last = block.firstSeq + block.outcomes.length - 1;
      if (last === block.firstSeq) return 1;
      // A block that landed inside the range before this read ends it (see VOID ranges above).
      const inside = await firstBlockWithin(block.stream, block.firstSeq + 1, last, deadline);
      if (inside === undefined) return block.outcomes.length;
      const kept = inside - block.firstSeq;
      const trimmed = { ...block, outcomes: block.outcomes.slice(0, kept) };
      if ((await put(trimmed, deadline, expecting(version))) === undefined) {
        throw dynamoDbUnavailable(
          `ending VOID range ${block.firstSeq}..${last} of ${block.stream} before block ${inside}`,
          new Error('the range changed under the audit'),
        );
      }
      return kept;
    },

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
