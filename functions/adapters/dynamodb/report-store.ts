import { gunzipSync, gzipSync } from 'node:zlib';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import type { ReportStore } from '../../core/reconcile/ports.js';
import { sameTopics, topicMoves } from '../../core/reconcile/topic-index.js';
import { batchDelete, batchPut } from './batch-put.js';
import { createChunkedItems } from './chunked-items.js';
import { orUnavailable } from './client.js';
import { conditional } from './conditional.js';
import { readAll } from './read-all.js';
import { readShard, shardAttributes } from './shard-index.js';
import { createTopicIndex } from './topic-index.js';

/**
 * Items per group (partition key `group`): `latest`, dated `report#<iso>` (and, from
 * restore-records.ts and plan-store.ts, `restore#<iso>` and `plan#<id>`). The
 * index of reported groups lives under one partition key of its own, sort keys `group#<id>`:
 * a real group of that name cannot collide, its sort keys never start with `group#`. The index
 * of which groups read which topic lives beside it (topic-index.ts).
 */
const INDEX = '~reconcile-groups';

const iso = (at: number) => new Date(at).toISOString();

/**
 * A group's entry in the index of reported groups. Only these items carry the group's place in
 * the table's `byShard` index (shard-index.ts), so that index holds them alone: a fan-out child
 * reads its own groups' entries, not the whole index.
 */
const indexEntry = (
  group: string,
  markedAt: number,
  digest: string | undefined,
  topics: readonly string[] | undefined,
) => ({
  group: INDEX,
  sk: `group#${group}`,
  markedAt,
  ...(digest !== undefined && { digest }),
  ...(topics !== undefined && { topics: [...topics] }),
  ...shardAttributes(group),
});

/**
 * Bodies above this are stored gzipped. A report is ~550 bytes of JSON per partition, so
 * DynamoDB's 400 KB item limit would stop a group at ~700 partitions; gzipped (~26 bytes per
 * partition) it holds ~15,000. Small bodies stay readable JSON.
 */
const GZIP_ABOVE = 64 * 1024;
/**
 * A gzipped body above this does not fit one item beside its key: the report is kept as a
 * chunked list instead (chunked-items.ts), its `partitions` the rows and the rest the head. A
 * dated report's list is its own sort key; the latest's is `latest#<iso>`, named by `latest`.
 */
const ONE_ITEM_BYTES = 380 * 1024;

type Encoded = { body: string } | { bodyGzip: Uint8Array };

/** The body of one item, or undefined when it would not fit one. */
function encode(value: object): Encoded | undefined {
  const body = JSON.stringify(value);
  if (body.length <= GZIP_ABOVE) return { body };
  const bodyGzip = gzipSync(body);
  return bodyGzip.length <= ONE_ITEM_BYTES ? { bodyGzip } : undefined;
}

function decode(item: Record<string, unknown>): object {
  const zipped = item.bodyGzip;
  const json = zipped instanceof Uint8Array ? gunzipSync(zipped).toString('utf8') : item.body;
  return JSON.parse(String(json)) as object;
}

/** A report too large for one item, as the head and rows of a chunked list. */
function split(value: object): { head: Encoded; rows: readonly unknown[] } {
  const { partitions, ...rest } = value as { partitions?: unknown };
  const head = encode(rest);
  if (!Array.isArray(partitions) || head === undefined) {
    throw new RangeError('a reconcile report too large for one item must be its partitions');
  }
  return { head, rows: partitions };
}

/** Reconcile reports per group: the latest, dated history, and the index of reported groups. */
export function createReportStore(client: DynamoDBDocumentClient, tableName: string): ReportStore {
  const attempt = <T>(work: () => Promise<T>, doing: string) => orUnavailable(doing, work);
  const lists = createChunkedItems(client, tableName);
  const topicIndex = createTopicIndex(client, tableName);
  const put = (item: Record<string, unknown>) =>
    attempt(
      () => client.send(new PutCommand({ TableName: tableName, Item: item })),
      `storing ${item.sk} of ${item.group}`,
    );
  const remove = (group: string, sk: string) =>
    attempt(
      () => client.send(new DeleteCommand({ TableName: tableName, Key: { group, sk } })),
      `removing ${sk} of ${group}`,
    );
  /** A query for the items of `group` with sort keys from `from` to `to`, ascending. */
  const between = (group: string, from: string, to: string) => ({
    TableName: tableName,
    KeyConditionExpression: '#group = :group AND sk BETWEEN :from AND :to',
    ExpressionAttributeNames: { '#group': 'group' },
    ExpressionAttributeValues: { ':group': group, ':from': from, ':to': to },
  });
  /** Sort keys of a group between `from` and `to`, at most `limit` (one page), oldest first. */
  const keys = async (group: string, from: string, to: string, limit: number) => {
    const query = new QueryCommand({
      ...between(group, from, to),
      ProjectionExpression: 'sk',
      Limit: limit,
    });
    const page = await attempt(() => client.send(query), `listing ${from} of ${group}`);
    return (page.Items ?? []).map((item) => String(item.sk));
  };
  /** A report as its one item, or (too large for one) stored as a chunked list now. */
  const itemOf = async (group: string, sk: string, at: number, report: object) => {
    const encoded = encode(report);
    if (encoded) return { group, sk, at, ...encoded };
    const { head, rows } = split(report);
    if (sk !== 'latest') {
      await lists.put(group, sk, { at, ...head }, rows);
      return undefined;
    }
    // The latest's list has its own key, so a reader of the one it replaces reads it whole.
    const list = `latest#${iso(at)}`;
    await lists.put(group, list, { at, ...head }, rows);
    return { group, sk, at, list };
  };
  /** The latest lists of `group` but `keep`: at most one is left by a report that shrank. */
  const removeLatestLists = async (group: string, keep?: string) => {
    for (const { sk } of await lists.heads(group, 'latest#'))
      if (sk !== keep) await lists.remove(group, sk);
  };
  const read = async (item: Record<string, unknown>) => {
    const sk = typeof item.list === 'string' ? item.list : String(item.sk);
    if (item.chunks === undefined && typeof item.list !== 'string') return decode(item);
    const stored = await lists.get(String(item.group), sk);
    return stored && { ...decode(stored.head), partitions: stored.rows };
  };
  const saveItems = async (items: ReadonlyArray<Record<string, unknown> | undefined>) => {
    const whole = items.filter((item) => item !== undefined);
    await batchPut(client, tableName, whole, 'storing group reports');
    for (const item of whole)
      if (typeof item.list === 'string') await removeLatestLists(String(item.group), item.list);
  };
  return {
    async saveGroupReport(group, at, report, dated) {
      const datedItem = await itemOf(group, `report#${iso(at)}`, at, dated);
      if (datedItem) await put(datedItem);
      await saveItems([await itemOf(group, 'latest', at, report)]);
    },
    async saveGroupReports(at, reports) {
      // Unconditional puts, so batched: 1,000 groups' latest reports are 40 requests, not 1,000.
      // A report too large for one item is chunked first, and its head joins the batch.
      // A group's topic index items join the batch when its entry is written (topic-index.ts).
      const items: Array<Record<string, unknown> | undefined> = [];
      const unread: Record<string, unknown>[] = [];
      const read = new Set<string>();
      const dropped = new Set<string>();
      for (const { group, report, dated, topics } of reports) {
        items.push(await itemOf(group, 'latest', at, report));
        if (dated) items.push(await itemOf(group, `report#${iso(at)}`, at, dated.body));
        if (!dated && !topics) continue;
        const marked = dated ? { markedAt: at, digest: dated.digest } : topics?.marked;
        items.push(indexEntry(group, marked?.markedAt ?? at, marked?.digest, topics?.now));
        // Written with a dated report alone, the entry keeps its topics; the topic index moves
        // only when they changed (an entry without them counts as `was` empty).
        if (!topics || sameTopics(topics.was, topics.now)) continue;
        const moves = topicMoves(topics.was, topics.now);
        items.push(...topicIndex.readerKeys(group, moves.put));
        unread.push(...topicIndex.readerKeys(group, moves.remove));
        for (const topic of moves.put) read.add(topic);
        for (const topic of moves.remove) dropped.add(topic);
      }
      await Promise.all([
        saveItems(items),
        batchDelete(client, tableName, unread, 'removing topics groups no longer read'),
      ]);
      await topicIndex.settle(read, dropped);
    },
    async latestGroupReport(group) {
      const get = new GetCommand({
        TableName: tableName,
        Key: { group, sk: 'latest' },
        ConsistentRead: true,
      });
      // Twice: a chunked latest a run replaces while it is read is gone; its successor is whole.
      for (let i = 0; ; i++) {
        const { Item } = await attempt(
          () => client.send(get),
          `reading the latest report of group ${group}`,
        );
        const report = Item && (await read(Item));
        if (report || !Item || i === 1) return report;
      }
    },
    async groupReportsSince(group, since) {
      const items = await readAll(
        client,
        { query: between(group, `report#${iso(since)}`, 'report#~') },
        `reading reports of group ${group}`,
      );
      // A chunked report's chunks (`report#<iso>#00000`…) follow its head: read through it.
      const heads = items.filter((item) => !String(item.sk).slice(7).includes('#'));
      const reports: object[] = [];
      for (const item of heads) {
        const report = await read(item);
        if (report) reports.push(report);
      }
      return reports;
    },
    async pruneGroupReports(group, before, limit) {
      if (limit <= 0) return 0;
      // `#~` takes the chunks of a chunked report at `before - 1` too (they sort after its head).
      const old = await keys(group, 'report#', `report#${iso(before - 1)}#~`, limit);
      for (const sk of old) await remove(group, sk);
      return old.length;
    },
    async reportedGroups(range) {
      const doing = 'reading the index of reported groups';
      const items = range
        ? await readShard(client, tableName, range, doing)
        : // '$' follows '#': every `group#<id>` sorts before `group$`, whatever the id.
          await readAll(client, { query: between(INDEX, 'group#', 'group$') }, doing);
      return new Map(
        items.map((item) => [
          String(item.sk).slice(6),
          {
            markedAt: Number(item.markedAt),
            ...(typeof item.digest === 'string' && { digest: item.digest }),
            ...(item.shardHash === undefined && { unindexed: true }),
            ...(Array.isArray(item.topics) && { topics: item.topics.map(String) }),
          },
        ]),
      );
    },
    async reportedGroupsAfter(after, limit) {
      // One page of the index: `limit` keys from after the cursor's, DynamoDB's own pages of at
      // most 1 MB read until there are that many (or none left).
      const ids: string[] = [];
      let start: Record<string, unknown> | undefined =
        after === undefined ? undefined : { group: INDEX, sk: `group#${after}` };
      while (ids.length < limit) {
        const query = new QueryCommand({
          ...between(INDEX, 'group#', 'group$'),
          ProjectionExpression: 'sk',
          Limit: limit - ids.length,
          ExclusiveStartKey: start,
        });
        const page = await attempt(
          () => client.send(query),
          'reading a page of the index of reported groups',
        );
        ids.push(...(page.Items ?? []).map((item) => String(item.sk).slice(6)));
        start = page.LastEvaluatedKey;
        if (start === undefined) break;
      }
      return ids;
    },
    reportedTopics: () => topicIndex.topics(),
    topicGroups: (topic) => topicIndex.groups(topic),
    async markReported(group, at, digest, topics) {
      await put(indexEntry(group, at, digest, topics));
    },
    async forgetGroup(group, markedAt, before) {
      const forgotten = await conditional(
        () =>
          client.send(
            new DeleteCommand({
              TableName: tableName,
              Key: { group, sk: 'latest' },
              ConditionExpression: 'attribute_not_exists(#at) OR #at < :before',
              ExpressionAttributeNames: { '#at': 'at' },
              ExpressionAttributeValues: { ':before': before },
            }),
          ),
        `forgetting the latest report of ${group}`,
      );
      if (forgotten) await removeLatestLists(group);
      let entry: Record<string, unknown> | undefined;
      const unmarked = await conditional(async () => {
        ({ Attributes: entry } = await client.send(
          new DeleteCommand({
            TableName: tableName,
            Key: { group: INDEX, sk: `group#${group}` },
            ConditionExpression: 'markedAt = :marked',
            ExpressionAttributeValues: { ':marked': markedAt },
            ReturnValues: 'ALL_OLD',
          }),
        ));
      }, `forgetting group ${group}`);
      // The topics its entry recorded leave the topic index with it; a group marked again
      // meanwhile keeps its entry and reads them still.
      const topics = unmarked && Array.isArray(entry?.topics) ? entry.topics.map(String) : [];
      if (topics.length === 0) return;
      const keys = topicIndex.readerKeys(group, topics);
      await batchDelete(client, tableName, keys, `removing group ${group} from the topic index`);
      await topicIndex.settle(new Set(), new Set(topics));
    },
  };
}
