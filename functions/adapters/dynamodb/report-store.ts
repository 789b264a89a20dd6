import { gunzipSync, gzipSync } from 'node:zlib';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import type { ReportStore } from '../../core/reconcile/ports.js';
import { batchPut } from './batch-put.js';
import { orUnavailable } from './client.js';
import { conditional } from './conditional.js';
import { readAll } from './read-all.js';

/**
 * Items per group (partition key `group`): `latest`, dated `report#<iso>` (and, from
 * restore-records.ts and plan-store.ts, `restore#<iso>` and `plan#<id>`). The
 * index of reported groups lives under one partition key of its own, sort keys `group#<id>`:
 * a real group of that name cannot collide, its sort keys never start with `group#`.
 */
const INDEX = '~reconcile-groups';

const iso = (at: number) => new Date(at).toISOString();

/**
 * Bodies above this are stored gzipped. A report is ~550 bytes of JSON per partition, so
 * DynamoDB's 400 KB item limit would stop a group at ~700 partitions; gzipped (~26 bytes per
 * partition) it holds ~15,000. Small bodies stay readable JSON.
 */
const GZIP_ABOVE = 64 * 1024;

function encode(value: object): { body: string } | { bodyGzip: Uint8Array } {
  const body = JSON.stringify(value);
  return body.length > GZIP_ABOVE ? { bodyGzip: gzipSync(body) } : { body };
}

function decode(item: Record<string, unknown>): object {
  const zipped = item.bodyGzip;
  const json = zipped instanceof Uint8Array ? gunzipSync(zipped).toString('utf8') : item.body;
  return JSON.parse(String(json)) as object;
}

/** Reconcile reports per group: the latest, dated history, and the index of reported groups. */
export function createReportStore(client: DynamoDBDocumentClient, tableName: string): ReportStore {
  const attempt = <T>(work: () => Promise<T>, doing: string) => orUnavailable(doing, work);
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
  return {
    async saveGroupReport(group, at, report, dated) {
      await put({ group, sk: `report#${iso(at)}`, ...encode(dated) });
      await put({ group, sk: 'latest', at, ...encode(report) });
    },
    async saveGroupReports(at, reports) {
      // Unconditional puts, so batched: 1,000 groups' latest reports are 40 requests, not 1,000.
      const items = reports.flatMap(({ group, report, dated }) => [
        { group, sk: 'latest', at, ...encode(report) },
        ...(dated
          ? [
              { group, sk: `report#${iso(at)}`, ...encode(dated.body) },
              { group: INDEX, sk: `group#${group}`, markedAt: at, digest: dated.digest },
            ]
          : []),
      ]);
      await batchPut(client, tableName, items, 'storing group reports');
    },
    async latestGroupReport(group) {
      const get = new GetCommand({
        TableName: tableName,
        Key: { group, sk: 'latest' },
        ConsistentRead: true,
      });
      const { Item } = await attempt(
        () => client.send(get),
        `reading the latest report of group ${group}`,
      );
      return Item ? decode(Item) : undefined;
    },
    async groupReportsSince(group, since) {
      const items = await readAll(
        client,
        { query: between(group, `report#${iso(since)}`, 'report#~') },
        `reading reports of group ${group}`,
      );
      return items.map(decode);
    },
    async pruneGroupReports(group, before, limit) {
      if (limit <= 0) return 0;
      const old = await keys(group, 'report#', `report#${iso(before - 1)}`, limit);
      for (const sk of old) await remove(group, sk);
      return old.length;
    },
    async reportedGroups() {
      const items = await readAll(
        client,
        // '$' follows '#': every `group#<id>` sorts before `group$`, whatever the id.
        { query: between(INDEX, 'group#', 'group$') },
        'reading the index of reported groups',
      );
      return new Map(
        items.map((item) => [
          String(item.sk).slice(6),
          {
            markedAt: Number(item.markedAt),
            ...(typeof item.digest === 'string' && { digest: item.digest }),
          },
        ]),
      );
    },
    async markReported(group, at) {
      await put({ group: INDEX, sk: `group#${group}`, markedAt: at });
    },
    async forgetGroup(group, markedAt, before) {
      await conditional(
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
      await conditional(
        () =>
          client.send(
            new DeleteCommand({
              TableName: tableName,
              Key: { group: INDEX, sk: `group#${group}` },
              ConditionExpression: 'markedAt = :marked',
              ExpressionAttributeValues: { ':marked': markedAt },
            }),
          ),
        `forgetting group ${group}`,
      );
    },
  };
}
