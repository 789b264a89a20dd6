import { gzipSync } from 'node:zlib';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createAuditStore,
  MAX_REPORTS_PER_TOPIC,
  reportsToKeep,
} from '../../functions/adapters/dynamodb/audit-store.js';
import type { AuditReport, SliceJson } from '../../functions/core/audit/ports.js';
import { TopicLog } from '../../functions/core/audit/topic-log.js';
import { ConflictError } from '../../functions/core/shared/errors.js';
import { createLocalTables, localDynamoDbClient } from '../../infra/local/local-tables.js';
import { auditReportOf } from '../helpers/audit-findings.js';
import { uniqueName } from '../helpers/unique-name.js';

// Stored audit reports over months, on the local DynamoDB API (which, like TTL on a bad day,
// never expires anything): each save deletes its topic's reports past 30 days or past the cap,
// and a report too large for one item as JSON is stored gzipped.
const DAY = 86_400_000;
const START = Date.parse('2026-03-01T00:00:00Z');

const report = (topic: string, at: number, streams: AuditReport['streams'] = []) =>
  auditReportOf(topic, streams, { at: new Date(at).toISOString() });

describe('audit report storage', () => {
  const client = localDynamoDbClient(inject('dynamodbEndpoint'));
  const documents = DynamoDBDocumentClient.from(client);
  let table = '';

  beforeAll(async () => {
    const tables = await createLocalTables(client, `${uniqueName('audits')}-`);
    table = String(tables.AuditsTable);
  });
  afterAll(async () => {
    await client.send(new DeleteTableCommand({ TableName: table }));
    client.destroy();
  });

  it("deletes a topic's reports older than 30 days when a newer one is saved", async () => {
    const store = createAuditStore(documents, table);
    for (let day = 0; day < 40; day++) {
      await store.save(`a-${day}`, report('orders', START + day * DAY), START + day * DAY);
      await store.save(`other-${day}`, report('other', START + day * DAY), START + day * DAY);
    }
    const { Items = [] } = await documents.send(new ScanCommand({ TableName: table }));
    const orders = Items.filter(
      (item) => item.topic === 'orders' && item.auditId !== 'reports#orders',
    );
    // Days 9..39: the 31 within 30 days of the newest; each topic's index is its own.
    expect(orders.map((item) => item.auditId).sort()).toEqual(
      Array.from({ length: 31 }, (_, i) => `a-${i + 9}`).sort(),
    );
    expect(await store.get('a-8')).toBeUndefined();
    expect(await store.get('a-9')).toMatchObject({ topic: 'orders' });
    expect(Items.filter((item) => item.topic === 'other')).toHaveLength(31 + 1);
  });

  it('stores a report over 400 KB as JSON gzipped, and reads it back whole', async () => {
    const store = createAuditStore(documents, table);
    const streams = Array.from({ length: 80 }, (_, i) => ({
      stream: `stream-${i}`,
      lost: Array.from({ length: 100 }, (_, j) => ({ from: j * 10, to: j * 10 + 5 })),
      pending: Array.from({ length: 100 }, (_, j) => ({ group: `group-${j}`, from: j, to: j })),
    })) as unknown as AuditReport['streams'];
    const big = report('big', START, streams);
    expect(JSON.stringify(big).length).toBeGreaterThan(400 * 1024);
    await store.save('big-1', big, START);
    expect(await store.get('big-1')).toEqual(big);
  });

  /**
   * What a fan-out child reads of partitions 0-7 of a 64-partition topic: `records` records of
   * `streams` interleaved streams, each stream's seqs spread over all partitions, so the slice
   * sees every eighth seq or so of each, one range each, over 15-minute buckets.
   */
  const sliceOf = (topic: string, records: number, streams: number, seed: number): SliceJson => {
    const read = new TopicLog(topic);
    let x = seed;
    const random = () => {
      x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
      return x / 2_147_483_648;
    };
    const seqs = new Array<number>(streams).fill(0);
    for (let offset = 0; offset < records; offset++) {
      const s = Math.floor(random() * streams);
      seqs[s] = (seqs[s] ?? 0) + 1 + Math.floor(random() * 14);
      const partition = offset % 8;
      read
        .stream(`stream-${s}`)
        .add(
          { seq: seqs[s] ?? 0, partition, offset, session: 's', timestamp: START + offset * 50 },
          900_000,
          false,
        );
      read.next.set(partition, offset + 1);
    }
    return { version: 1, topic, slice: '0-7', basedOn: 3, complete: true, read: read.toJSON() };
  };
  const itemsOf = async (prefix: string) => {
    const { Items = [] } = await documents.send(new ScanCommand({ TableName: table }));
    return Items.filter((item) => String(item.auditId).startsWith(prefix));
  };

  it('keeps a fan-out slice of 100,000 records of 50 interleaved streams (over 400 KB gzipped) in parts, and reads it back whole', async () => {
    const store = createAuditStore(documents, table);
    const topic = uniqueName('fanout');
    const slice = sliceOf(topic, 100_000, 50, 7);
    expect(gzipSync(JSON.stringify(slice)).length).toBeGreaterThan(409_600);

    await store.saveSlice(topic, '0-7', slice, 0);
    expect(await store.loadSlice(topic, '0-7')).toEqual({ state: slice, version: 1 });
    const first = await itemsOf(`checkpoint#${topic}#slice#0-7#`);
    expect(first.length).toBeGreaterThan(1);

    // The next save replaces the parts it supersedes; a save over an old version is refused and
    // leaves no part behind.
    const next = sliceOf(topic, 100_000, 50, 8);
    await store.saveSlice(topic, '0-7', next, 1);
    await expect(store.saveSlice(topic, '0-7', slice, 1)).rejects.toThrow(ConflictError);
    expect(await store.loadSlice(topic, '0-7')).toEqual({ state: next, version: 2 });
    const parts = await itemsOf(`checkpoint#${topic}#slice#0-7#`);
    expect(parts.length).toBe(first.length);
    expect(parts.some((part) => first.some((old) => old.auditId === part.auditId))).toBe(false);
  });

  it('keeps at most MAX_REPORTS_PER_TOPIC ids, dropping the oldest', () => {
    const entries = Array.from({ length: MAX_REPORTS_PER_TOPIC }, (_, i): [string, number] => [
      `r-${i}`,
      START + i,
    ]);
    const { keep, drop } = reportsToKeep(entries, ['new', START + DAY], START + DAY);
    expect(keep).toHaveLength(MAX_REPORTS_PER_TOPIC);
    expect(drop).toEqual([['r-0', START]]);
    expect(keep.at(-1)).toEqual(['new', START + DAY]);
  });
});
