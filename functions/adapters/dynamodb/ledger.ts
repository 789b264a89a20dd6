import { randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import {
  DAY_MS,
  DEFAULT_LEDGER_RETENTION_DAYS,
  expiresAtSeconds,
  isExpired,
  LEDGER_SHARDS,
  ledgerBlockKeys,
  ledgerPartitionKeys,
  ledgerRetention,
  ledgerShardKey,
  ledgerVoidKey,
} from '../../core/publish/ledger-layout.js';
import type { Ledger, LedgerBlock, LedgerVersion, TxnMark } from '../../core/publish/ports.js';
import type { Deadline } from '../../core/shared/deadline.js';
import { decodeOutcome, type EncodedOutcome, outcomesJson } from '../../core/shared/outcomes.js';
import { dynamoDbUnavailable, within } from './client.js';
import { createDayMarks } from './ledger-day-marks.js';
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
  const json = outcomesJson(block.outcomes);
  return json.length > COMPRESS_ABOVE_BYTES ? { outcomesGz: gzipSync(json) } : { outcomes: json };
}

/**
 * A transactional block's mark (ports.ts TxnMark): JSON text, gzipped above the outcomes' size
 * too. A PREPARED mark holds each record's seq, partition and offset: 10,000 records are ~600 KB
 * of text, over DynamoDB's 400 KB item, a few tens of KB gzipped (ledger-txn-mark.test.ts).
 */
function txnAttribute(block: LedgerBlock): Record<string, string | Uint8Array> {
  if (block.txn === undefined) return {};
  const json = JSON.stringify(block.txn);
  return json.length > COMPRESS_ABOVE_BYTES ? { txnGz: gzipSync(json) } : { txn: json };
}

/**
 * The version of a block read from its item before sharding (keyed by the stream alone): a
 * write `over` it goes back to that item (see `expecting`), so a request or an audit that read a
 * block before the change still settles it where it is.
 */
const LEGACY = 'legacy:';

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
    // '' for an item from before versions, which only the layout before sharding has.
    version:
      typeof item.version !== 'string'
        ? ''
        : item.stream === stream
          ? `${LEGACY}${item.version}`
          : item.version,
    ...(item.pending === true && { pending: true as const }),
    // A transactional request's mark: JSON text, gzipped when large (txnAttribute).
    ...(typeof item.txn === 'string' && { txn: JSON.parse(item.txn) as TxnMark }),
    ...(item.txnGz instanceof Uint8Array && {
      txn: JSON.parse(gunzipSync(item.txnGz).toString('utf8')) as TxnMark,
    }),
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
  if (over.startsWith(LEGACY)) over = over.slice(LEGACY.length);
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

export interface LedgerOptions {
  /** How long a block is kept after its last write: TALLY_LEDGER_RETENTION_DAYS (default 30). */
  readonly retentionMs?: number;
  /** Partition keys per stream (core/publish/ledger-layout.ts); 1 is one key per stream. */
  readonly shards?: number;
  /** Epoch ms: the time writes expire from, and reads judge expiry by. */
  readonly now?: () => number;
}

type Item = Record<string, unknown>;

/**
 * The publish ledger: one item per request's block of sequence numbers, keyed (`stream#shard`,
 * first seq), holding each record's outcome in compact form and its expiry (`expiresAt`, the
 * table's TTL). Items keyed (stream, first seq), as before sharding, are read beside them and
 * never written again except by a write over a version read from one (see LEGACY).
 *
 * VOID ranges. The audit records a run of unsent seqs [from, to] as ONE item (a block of VOID
 * outcomes, `voided`) under the stream's VOID key (`stream#void`, ledgerVoidKey), so one write
 * gives a whole hole its fate. Ranges are disjoint, and only the audit writes them, so one key
 * takes their few writes. A hole is not always whole allocations: a lease is carved into
 * requests' blocks, so a request (a retry of a key, hours later) may open a block at any seq
 * inside a range, under a key that is not the range's. With single-item conditions only, each
 * side writes first and reads the other after, consistently:
 * - the audit puts the range (A1, marked `pending`), then looks for a block starting in from..to
 *   under every block key (A2) and, finding one, ends the range before it, or takes it back when
 *   the block starts at `from` (A3); otherwise it clears the mark (one write more). An audit
 *   stopped between A1 and A3 leaves the range pending: the next audit that reads it does A2 and
 *   A3 (confirmVoid) before counting it, and a lookup does not answer VOID under it;
 * - a publisher's open puts its block (P1), then reads the VOID key for the range with the
 *   highest start at or below its last seq (P2; ranges are disjoint, so only that one can
 *   overlap it) and, when it overlaps, deletes its block and sends nothing.
 * If P1 lands before A2, A2 sees the block and the range ends below it; otherwise A1 came before
 * P1, hence before P2, and P2 sees the range. So no seq is both VOID and sent. An open whose P1
 * has landed before the audit could first judge its seqs (`judgedFrom`) skips P2: any range
 * holding them is written after it, so its A2 sees the block. Per-seq VOIDs written before
 * sharding (under the stream's own key) are found by P2 too.
 */
export function createLedger(
  client: DynamoDBDocumentClient,
  tableName: string,
  {
    retentionMs = DEFAULT_LEDGER_RETENTION_DAYS * DAY_MS,
    shards = LEDGER_SHARDS,
    now = Date.now,
  }: LedgerOptions = {},
): Ledger {
  const dayMarks = createDayMarks(client, tableName, retentionMs);
  const partitions = (stream: string) => ledgerPartitionKeys(stream, shards);
  /** A block's item, unless it is past its TTL (legacy items: their last write's). */
  const live = (item: Item | undefined): item is Item => {
    if (item === undefined || typeof item.seq !== 'number') return false;
    const expiresAt =
      typeof item.expiresAt === 'number'
        ? item.expiresAt
        : typeof item.updatedAt === 'string'
          ? expiresAtSeconds(Date.parse(item.updatedAt), retentionMs)
          : undefined;
    return !isExpired(expiresAt, now());
  };

  /**
   * Puts the block's item under a new version, under `condition` when given: the version, or
   * undefined when the condition refused it. A VOID block carries `voided`, the attribute a
   * publisher's first write is conditioned on. With `marks`, a publisher's write (a block not
   * read back from the store, not VOID) marks the stream's day; the audit's VOIDs and fills never
   * do (their seqs are older than the day).
   */
  async function put(
    block: LedgerBlock,
    deadline: Deadline | undefined,
    condition?: Condition,
    over?: LedgerVersion,
    marks?: 'marks',
    range?: 'range' | 'pending',
  ): Promise<string | undefined> {
    const voided = block.outcomes.every((o) => o.status === 'VOID');
    const version = randomUUID();
    const at = now();
    const legacy =
      over !== undefined && over !== 'absent' && (over === '' || over.startsWith(LEGACY));
    const key =
      range !== undefined
        ? ledgerVoidKey(block.stream)
        : legacy
          ? block.stream
          : ledgerShardKey(block.stream, block.firstSeq, shards);
    const marking =
      marks !== undefined && block.writtenAt === undefined && !voided
        ? dayMarks.mark(block.stream, block.firstSeq, at, deadline)
        : undefined;
    try {
      await client.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            stream: key,
            seq: block.firstSeq,
            count: block.outcomes.length,
            lastSeq: block.firstSeq + block.outcomes.length - 1,
            topic: block.topic,
            session: block.session,
            idempotencyKey: block.idempotencyKey,
            ...outcomesAttribute(block),
            ...(voided && { voided: true }),
            ...(range === 'pending' && { pending: true }),
            ...txnAttribute(block),
            updatedAt: new Date(at).toISOString(),
            expiresAt: expiresAtSeconds(at, retentionMs),
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
      return legacy ? `${LEGACY}${version}` : version;
    } catch (error) {
      if (condition && error instanceof ConditionalCheckFailedException) return undefined;
      throw dynamoDbUnavailable(`recording seqs ${block.firstSeq}.. of ${block.stream}`, error);
    } finally {
      await marking;
    }
  }

  /** The live block with the highest first seq at or below `seq` under partition key `key`. */
  async function highestAtOrBelow(key: string, seq: number, deadline?: Deadline) {
    const { Items } = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: '#stream = :stream AND #seq <= :seq',
        ExpressionAttributeNames: { '#stream': 'stream', '#seq': 'seq' },
        ExpressionAttributeValues: { ':stream': key, ':seq': seq },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
      within(deadline),
    );
    return Items?.[0];
  }

  /** The first seq of a block (not a VOID range) starting in from..to, read consistently. */
  async function firstBlockWithin(
    stream: string,
    from: number,
    to: number,
    deadline: Deadline | undefined,
  ): Promise<number | undefined> {
    const firstUnder = async (key: string) => {
      const { Items } = await client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: '#stream = :stream AND #seq BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#stream': 'stream', '#seq': 'seq', '#voided': 'voided' },
          ExpressionAttributeValues: { ':stream': key, ':from': from, ':to': to },
          ProjectionExpression: '#seq, #voided',
          ConsistentRead: true,
        }),
        within(deadline),
      );
      // Under the key before sharding, per-seq VOIDs sit among blocks: they are no block.
      const seq = (Items ?? []).find((item) => item.voided !== true)?.seq;
      return typeof seq === 'number' ? seq : undefined;
    };
    try {
      const found = await Promise.all(ledgerBlockKeys(stream, shards).map(firstUnder));
      const starts = found.filter((seq): seq is number => seq !== undefined);
      return starts.length > 0 ? Math.min(...starts) : undefined;
    } catch (error) {
      throw dynamoDbUnavailable(`reading the ledger of ${stream} within ${from}..${to}`, error);
    }
  }

  /** Whether a VOID range (or a per-seq VOID from before sharding) holds a seq of `block`. */
  async function coveredByVoid(block: LedgerBlock, deadline: Deadline): Promise<boolean> {
    const first = block.firstSeq;
    const last = first + block.outcomes.length - 1;
    try {
      const [range, legacy] = await Promise.all([
        highestAtOrBelow(ledgerVoidKey(block.stream), last, deadline),
        client.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: '#stream = :stream AND #seq BETWEEN :from AND :to',
            FilterExpression: '#voided = :true',
            ExpressionAttributeNames: { '#stream': 'stream', '#seq': 'seq', '#voided': 'voided' },
            ExpressionAttributeValues: {
              ':stream': block.stream,
              ':from': first,
              ':to': last,
              ':true': true,
            },
            ProjectionExpression: '#seq',
            ConsistentRead: true,
          }),
          within(deadline),
        ),
      ]);
      const rangeHolds = live(range) && Number(range.seq) + Number(range.count ?? 1) - 1 >= first;
      return rangeHolds || (legacy.Items ?? []).some(live);
    } catch (error) {
      throw dynamoDbUnavailable(
        `looking for a VOID range holding seqs ${first}..${last} of ${block.stream}`,
        error,
      );
    }
  }

  /** Deletes the item of `block` under `key` if it still has `version`; false if it changed. */
  async function takeBack(key: string, block: LedgerBlock, version: string, deadline?: Deadline) {
    try {
      await client.send(
        new DeleteCommand({
          TableName: tableName,
          Key: { stream: key, seq: block.firstSeq },
          ConditionExpression: '#version = :version',
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':version': version },
        }),
        within(deadline),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw dynamoDbUnavailable(
        `taking back block ${block.firstSeq} of ${block.stream}: nothing was sent`,
        error,
      );
    }
  }

  /** The VOID range starting at `firstSeq`, read consistently. */
  async function rangeAt(stream: string, firstSeq: number, deadline?: Deadline) {
    try {
      const { Item } = await client.send(
        new GetCommand({
          TableName: tableName,
          Key: { stream: ledgerVoidKey(stream), seq: firstSeq },
          ConsistentRead: true,
        }),
        within(deadline),
      );
      return live(Item) ? toBlock(stream, Item) : undefined;
    } catch (error) {
      throw dynamoDbUnavailable(`reading VOID range ${firstSeq} of ${stream}`, error);
    }
  }

  /**
   * A2 and A3 of a range written pending at `version`: ends it before the first block found
   * inside (takes it back when that block starts at its first seq), else clears its mark. Another
   * audit may confirm the same range meanwhile (both checks came after A1): its answer stands.
   */
  async function confirm(range: LedgerBlock, version: string, deadline?: Deadline) {
    const last = range.firstSeq + range.outcomes.length - 1;
    for (let attempt = 0; attempt < 3; attempt++) {
      const inside = await firstBlockWithin(range.stream, range.firstSeq, last, deadline);
      const kept = inside === undefined ? range.outcomes.length : inside - range.firstSeq;
      const done =
        kept === 0
          ? await takeBack(ledgerVoidKey(range.stream), range, version, deadline)
          : (await put(
              { ...range, outcomes: range.outcomes.slice(0, kept) },
              deadline,
              expecting(version),
              version,
              undefined,
              'range',
            )) !== undefined;
      if (done) return kept;
      const now = await rangeAt(range.stream, range.firstSeq, deadline);
      if (now === undefined) return 0;
      if (now.pending !== true) return now.outcomes.length;
      // Taken back and written again by another audit (A1 at the same first seq): check that one.
      range = now;
      version = now.version ?? '';
    }
    throw dynamoDbUnavailable(
      `confirming VOID range ${range.firstSeq}..${last} of ${range.stream}`,
      new Error('the range kept changing under the audit'),
    );
  }

  return {
    write: (block, deadline, over) =>
      put(block, deadline, over === undefined ? undefined : expecting(over), over, 'marks'),

    async open(block, deadline, judgedFrom) {
      const version = await put(
        block,
        deadline,
        {
          expression: 'attribute_not_exists(#seq) OR attribute_not_exists(voided)',
          names: { '#seq': 'seq' },
        },
        undefined,
        'marks',
      );
      if (version === undefined) return 'voided';
      // Landed before the audit may judge its seqs: any range holding them comes later, and its
      // own read after (A2) finds this block.
      if (judgedFrom !== undefined && now() < judgedFrom) return { version };
      if (!(await coveredByVoid(block, deadline))) return { version };
      // A VOID range written before this block holds its seqs: nothing is sent, and the block
      // goes so that the seqs keep that one fate.
      await takeBack(
        ledgerShardKey(block.stream, block.firstSeq, shards),
        block,
        version,
        deadline,
      );
      return 'voided';
    },

    async void(block, deadline) {
      const version = await put(
        block,
        deadline,
        expecting('absent'),
        undefined,
        undefined,
        'pending',
      );
      if (version === undefined) return 0;
      // A block that landed inside the range before this read ends it (see VOID ranges above).
      return confirm(block, version, deadline);
    },

    confirmVoid: (range, deadline) =>
      range.pending === true
        ? confirm(range, range.version ?? '', deadline)
        : Promise.resolve(range.outcomes.length),

    fill: async (block, deadline) =>
      (await put(block, deadline, expecting('absent'))) !== undefined,

    /**
     * One consistent read of the item a block starting at `seq` has; else the highest block at
     * or below `seq` of each partition key (the shards, the VOID ranges and the key before
     * sharding) at once: blocks never overlap, so only the highest of them can hold `seq`.
     */
    async find(stream, seq, deadline) {
      const doing = `looking up seq ${seq} of stream ${stream}`;
      let item: Item | undefined;
      try {
        ({ Item: item } = await client.send(
          new GetCommand({
            TableName: tableName,
            Key: { stream: ledgerShardKey(stream, seq, shards), seq },
            ConsistentRead: true,
          }),
          within(deadline),
        ));
        if (item === undefined) {
          const found = await Promise.all(
            partitions(stream).map((key) => highestAtOrBelow(key, seq, deadline)),
          );
          // The highest first seq; at a tie the sharded copy (a rewrite of a legacy block).
          for (const candidate of found) {
            if (candidate === undefined) continue;
            if (item === undefined || Number(candidate.seq) > Number(item.seq)) item = candidate;
            else if (candidate.seq === item.seq && item.stream === stream) item = candidate;
          }
        }
      } catch (error) {
        throw dynamoDbUnavailable(doing, error);
      }
      if (!live(item) || typeof item.count !== 'number') return undefined;
      if (seq >= Number(item.seq) + item.count) return undefined;
      return toBlock(stream, item);
    },

    async retention(stream, counter) {
      return ledgerRetention(await dayMarks.read(stream), now(), retentionMs, counter);
    },

    /** The key before sharding first: a block rewritten since comes after its old copy. */
    async forEachBlock(stream, onBlock) {
      for (const key of partitions(stream).reverse()) {
        await forEachPage(
          client,
          {
            query: {
              TableName: tableName,
              KeyConditionExpression: '#stream = :stream',
              ExpressionAttributeNames: { '#stream': 'stream' },
              ExpressionAttributeValues: { ':stream': key },
              ConsistentRead: true,
            },
          },
          `reading the ledger of stream ${stream}`,
          (items) => {
            for (const item of items) if (live(item)) onBlock(toBlock(stream, item));
          },
        );
      }
    },

    /** Keys from the write-time index (eventually consistent), then the items, consistently. */
    async forEachChangedBlock(stream: string, since: number, onBlock: (b: LedgerBlock) => void) {
      const doing = `reading the ledger of stream ${stream} written since ${new Date(since).toISOString()}`;
      // Every key's index at once (one round trip for the 66 keys, not 66 in a row), the keys
      // then in their order: the key before sharding first, as forEachBlock reads them.
      const perKey = await Promise.all(
        partitions(stream)
          .reverse()
          .map(async (key) => {
            const found: Array<{ stream: string; seq: number }> = [];
            await forEachPage(
              client,
              {
                query: {
                  TableName: tableName,
                  IndexName: BY_WRITE_TIME_INDEX,
                  KeyConditionExpression: '#stream = :stream AND #updatedAt >= :since',
                  ExpressionAttributeNames: { '#stream': 'stream', '#updatedAt': 'updatedAt' },
                  ExpressionAttributeValues: {
                    ':stream': key,
                    ':since': new Date(since).toISOString(),
                  },
                },
              },
              doing,
              (items) => {
                for (const item of items) found.push({ stream: key, seq: Number(item.seq) });
              },
            );
            return found;
          }),
      );
      const keys = perKey.flat();
      for (let i = 0; i < keys.length; i += BATCH_GET_KEYS) {
        let batch: Record<string, unknown>[] | undefined = keys.slice(i, i + BATCH_GET_KEYS);
        for (let attempt = 0; batch !== undefined && batch.length > 0; attempt++) {
          if (attempt > 0)
            await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
          let answer: BatchGetCommandOutput;
          try {
            answer = await client.send(
              new BatchGetCommand({
                RequestItems: { [tableName]: { Keys: batch, ConsistentRead: true } },
              }),
            );
          } catch (error) {
            throw dynamoDbUnavailable(doing, error);
          }
          // A batch answers in any order: the copies before sharding first, as forEachBlock.
          const items = (answer.Responses?.[tableName] ?? []).filter(live);
          items.sort((a, b) => Number(b.stream === stream) - Number(a.stream === stream));
          for (const item of items) onBlock(toBlock(stream, item));
          batch = answer.UnprocessedKeys?.[tableName]?.Keys;
          if (attempt >= 8 && batch !== undefined && batch.length > 0)
            throw dynamoDbUnavailable(doing, new Error(`${batch.length} keys left unprocessed`));
        }
      }
    },
  };
}
