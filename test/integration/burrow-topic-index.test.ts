import { DeleteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createMappingStore } from '../../functions/adapters/dynamodb/mapping-store.js';
import { createOffsetHistory } from '../../functions/adapters/dynamodb/offset-history.js';
import { createReportStore } from '../../functions/adapters/dynamodb/report-store.js';
import { shardOf, shardScope } from '../../functions/core/reconcile/group-shards.js';
import type { ReportStore } from '../../functions/core/reconcile/ports.js';
import { createReconciler } from '../../functions/core/reconcile/reconciler.js';
import { topicsRead } from '../../functions/core/reconcile/topic-index.js';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import {
  type DynamoDbCall,
  type DynamoDbProxy,
  startDynamoDbProxy,
} from '../helpers/dynamodb-proxy.js';
import { FakeCluster } from '../helpers/fake-cluster.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { usePublishEnv } from '../helpers/publish-env.js';

// Burrow's topic routes and consumer pages read what their answer needs, not the whole index:
// the real handler over the reports table on dynalite, every call it makes counted through a
// DynamoDB proxy; and the topic index kept by real reconcile runs (FakeCluster as Kafka, the real
// DynamoDB stores) as groups stop reading a topic, are forgotten, and across an upgrade.

const GROUPS = 5_000;
const BUSY_TOPICS = 20;
const CLUSTER = '/v3/kafka/local-tally';

let proxy: DynamoDbProxy;
afterAll(() => proxy?.close());

describe("Burrow's topic routes and consumer pages at 5,000 reported groups", () => {
  let documents: DynamoDBDocumentClient;
  let reports: ReportStore;
  let reportsTable: string;
  let burrow: Awaited<typeof import('../../functions/reconcile/burrow-handler.js')>['handler'];

  /** GET `path` as API Gateway routes it, and the DynamoDB calls it made. */
  const get = async (path: string, query?: Record<string, string>) => {
    const event = {
      ...httpEvent({ routeKey: `GET ${path}`, ...(query && { query }) }),
      rawPath: path,
    };
    const before = proxy.calls.length;
    const answer = (await burrow(event as never, lambdaContext())) as {
      statusCode: number;
      body: string;
    };
    const calls = proxy.calls.slice(before).filter((c) => c.table === reportsTable);
    return { status: answer.statusCode, body: JSON.parse(answer.body), calls };
  };
  const count = (calls: DynamoDbCall[], operation: string) =>
    calls.filter((c) => c.operation === operation).length;
  /** Items the calls of `operation` answered (each counted by the proxy). */
  const items = (calls: DynamoDbCall[], operation: string) =>
    calls
      .filter((c) => c.operation === operation)
      .reduce((sum, c) => {
        expect(c.itemsAnswered, `${operation} answered no count`).toBeTypeOf('number');
        return sum + (c.itemsAnswered ?? 0);
      }, 0);

  const topic = 'tb.index.watched';
  const readers = ['g-00007', 'g-02500', 'g-04999'];
  const groupId = (i: number) => `g-${String(i).padStart(5, '0')}`;
  const busy = (i: number) => `tb.index.busy-${String(i % BUSY_TOPICS).padStart(2, '0')}`;
  const partition = (name: string, p: number, logEnd: number) => ({
    topic: name,
    partition: p,
    logEnd,
  });

  beforeAll(async () => {
    proxy = await startDynamoDbProxy(inject('dynamodbEndpoint'));
    const env = await usePublishEnv({
      TALLY_BURROW_CLUSTER_NAME: 'Local-Tally',
      DYNAMODB_ENDPOINT: proxy.endpoint,
    });
    reportsTable = env.TALLY_RECONCILE_REPORTS_TABLE as string;
    documents = DynamoDBDocumentClient.from(localDynamoDbClient(inject('dynamodbEndpoint')));
    reports = createReportStore(documents, reportsTable);
    // As a reconcile run writes them: each group's latest report and index entry with its
    // topics, and the topic index; 3 groups read the watched topic (and a busy one).
    const at = Date.now();
    const writes = Array.from({ length: GROUPS }, (_, i) => {
      const group = groupId(i);
      const partitions = [partition(busy(i), 0, 1_000 + i)];
      const k = readers.indexOf(group);
      if (k >= 0) partitions.push(partition(topic, 0, 100 + k), partition(topic, 1, 200 - k));
      const report = { group, state: 'Stable', status: 'OK', partitions };
      return { group, report, topics: { now: topicsRead(report), was: [] } };
    });
    for (let i = 0; i < writes.length; i += 500) {
      await reports.saveGroupReports(at, writes.slice(i, i + 500));
    }
    burrow = (await import('../../functions/reconcile/burrow-handler.js')).handler;
  });
  afterAll(() => documents?.destroy());

  it("answers a topic's offsets and consumers reading only its 3 readers' items, not 5,000 reports", async () => {
    const detail = await get(`${CLUSTER}/topic/${topic}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ error: false, message: 'topic offsets returned' });
    // The log end per partition, the highest any reader saw.
    expect(detail.body.offsets).toEqual([102, 200]);
    // Its readers' keys (one Query) and their 3 latest reports; before the topic index, one
    // GetItem per reported group: 5,000.
    expect(count(detail.calls, 'GetItem')).toBe(3);
    expect(items(detail.calls, 'Query')).toBe(3);
    expect(detail.calls.length).toBeLessThanOrEqual(4);

    const consumers = await get(`${CLUSTER}/topic/${topic}/consumers`);
    expect(consumers.status).toBe(200);
    expect(consumers.body).toMatchObject({ message: 'consumers of topic returned' });
    expect(consumers.body.consumers).toEqual(readers);
    expect(count(consumers.calls, 'GetItem')).toBe(0);
    expect(items(consumers.calls, 'Query')).toBe(3);

    // A topic no group reads, and a name Kafka could not have: 404, Burrow's bodies.
    for (const name of ['tb.index.unread', 'not%23a%23topic']) {
      const unknown = await get(`${CLUSTER}/topic/${name}`);
      expect(unknown).toMatchObject({
        status: 404,
        body: { error: true, message: 'cluster or topic not found' },
      });
      expect(count(unknown.calls, 'GetItem')).toBe(0);
    }
  });

  it('lists the topics reading one item per topic, not one per group', async () => {
    const list = await get(`${CLUSTER}/topic`);
    expect(list.status).toBe(200);
    const expected = [topic, ...Array.from({ length: BUSY_TOPICS }, (_, i) => busy(i))].sort();
    expect(list.body.topics).toEqual(expected);
    expect(count(list.calls, 'GetItem')).toBe(0);
    expect(items(list.calls, 'Query')).toBe(BUSY_TOPICS + 1);
  });

  it('reads about `limit` index items per consumer page, every group once across pages', async () => {
    const seen: string[] = [];
    let query: Record<string, string> = { limit: '700' };
    for (let pages = 0; ; pages++) {
      expect(pages).toBeLessThan(20);
      const page = await get(`${CLUSTER}/consumer`, query);
      expect(page.status).toBe(200);
      // The page and one more id (whether there is a next): never the whole index of 5,000.
      expect(items(page.calls, 'Query')).toBeLessThanOrEqual(701);
      expect(count(page.calls, 'GetItem')).toBe(0);
      seen.push(...(page.body.consumers as string[]));
      if (page.body.next === null) break;
      query = Object.fromEntries(new URL(page.body.next as string).searchParams);
    }
    expect(seen).toEqual(Array.from({ length: GROUPS }, (_, i) => groupId(i)));
    // The whole list, without limit or cursor, stays whole.
    const whole = await get(`${CLUSTER}/consumer`);
    expect(whole.body.consumers).toHaveLength(GROUPS);
  });
});

describe('the topic index as reconcile runs move it', () => {
  const HOUR = 3_600_000;
  const START = Date.parse('2026-03-01T00:00:00Z');
  let documents: DynamoDBDocumentClient;
  let reportsTable: string;
  let burrow: Awaited<typeof import('../../functions/reconcile/burrow-handler.js')>['handler'];
  const get = async (path: string) => {
    const event = { ...httpEvent({ routeKey: `GET ${path}` }), rawPath: path };
    const answer = (await burrow(event as never, lambdaContext())) as {
      statusCode: number;
      body: string;
    };
    return { status: answer.statusCode, body: JSON.parse(answer.body) };
  };
  const consumersOf = async (name: string) => {
    const answer = await get(`${CLUSTER}/topic/${name}/consumers`);
    return answer.status === 404 ? [] : (answer.body.consumers as string[]);
  };
  const topicList = async () =>
    ((await get(`${CLUSTER}/topic`)).body.topics as string[]).filter((t) => t.startsWith('tr.'));

  beforeAll(async () => {
    reportsTable = process.env.TALLY_RECONCILE_REPORTS_TABLE as string;
    documents = DynamoDBDocumentClient.from(localDynamoDbClient(inject('dynamodbEndpoint')));
    burrow = (await import('../../functions/reconcile/burrow-handler.js')).handler;
  });
  afterAll(() => documents?.destroy());

  it('drops a group that stops reading a topic, and a forgotten group, from the topic index', async () => {
    let now = START;
    const cluster = new FakeCluster();
    cluster.topics.set('tr.orders', [{ logStart: 0, logEnd: 100 }]);
    cluster.topics.set('tr.refunds', [{ logStart: 0, logEnd: 50 }]);
    const reading = (...topics: string[]) => ({
      state: 'Stable',
      members: [
        {
          memberId: 'm1',
          clientId: 'c1',
          clientHost: '/10.0.0.1',
          assignment: Object.fromEntries(topics.map((t) => [t, [0]])),
        },
      ],
      commits: new Map(topics.map((t) => [`${t}#0`, 10])),
    });
    cluster.groups.set('tr-a', reading('tr.orders', 'tr.refunds'));
    cluster.groups.set('tr-b', reading('tr.orders'));
    const reports = createReportStore(documents, reportsTable);
    const reconciler = createReconciler(
      {
        source: cluster.source(() => now),
        history: createOffsetHistory(documents, process.env.TALLY_OFFSET_HISTORY_TABLE as string),
        mappings: createMappingStore(documents, process.env.TALLY_MAPPINGS_TABLE as string),
        reports,
      },
      { windowSize: 3, graceMs: 0, retentionMs: 2 * HOUR, pruneBudget: 100 },
    );
    await reconciler.run();
    expect(await consumersOf('tr.orders')).toEqual(['tr-a', 'tr-b']);
    expect(await consumersOf('tr.refunds')).toEqual(['tr-a']);
    expect(await topicList()).toEqual(['tr.orders', 'tr.refunds']);

    // tr-a stops reading refunds (no member, its commit gone); tr-b stops being a group. Their
    // history keeps them reported for a retention, then tr-a's report drops refunds and tr-b
    // is forgotten (1.5 retentions after its last mark).
    cluster.groups.set('tr-a', reading('tr.orders'));
    cluster.groups.delete('tr-b');
    const done = async () => {
      const latest = (await reports.latestGroupReport('tr-a')) as {
        partitions: { topic: string }[];
      };
      const refunds = latest.partitions.some((p) => p.topic === 'tr.refunds');
      return !refunds && !(await reports.reportedGroups()).has('tr-b');
    };
    let runs = 0;
    for (; runs < 30 && !(await done()); runs++) {
      now += HOUR / 2;
      await reconciler.run();
    }
    expect(runs).toBeLessThan(30);
    expect(await consumersOf('tr.orders')).toEqual(['tr-a']);
    expect(await consumersOf('tr.refunds')).toEqual([]);
    expect((await get(`${CLUSTER}/topic/tr.refunds`)).status).toBe(404);
    // No group reads refunds: it leaves the topic list too.
    expect(await topicList()).toEqual(['tr.orders']);
    const entry = (await reports.reportedGroups()).get('tr-a');
    expect(entry?.topics).toEqual(['tr.orders']);

    // A run that changes nothing writes nothing of the topic index (it compares the entry's).
    cluster.groups.set('tr-a', reading('tr.orders'));
    now += 60_000;
    const before = (await reports.reportedGroups()).get('tr-a');
    await reconciler.run();
    expect((await reports.reportedGroups()).get('tr-a')).toEqual(before);
  });

  it("keeps the topic index across fan-out children, each moving its own groups' items", async () => {
    const SHARDS = 4;
    const now = START + 200 * HOUR;
    const cluster = new FakeCluster();
    const groups = Array.from({ length: 12 }, (_, k) => `ts-${k}`);
    const reads = (...topics: string[]) => ({
      state: 'Empty',
      members: [],
      commits: new Map(topics.map((t) => [`${t}#0`, 1])),
    });
    cluster.topics.set('tr.shared', [{ logStart: 0, logEnd: 5 }]);
    for (const [k, group] of groups.entries()) {
      cluster.topics.set(`tr.own-${k}`, [{ logStart: 0, logEnd: 5 }]);
      cluster.groups.set(group, reads('tr.shared', `tr.own-${k}`));
    }
    const reports = createReportStore(documents, reportsTable);
    const reconciler = createReconciler(
      {
        source: cluster.source(() => now),
        history: createOffsetHistory(documents, process.env.TALLY_OFFSET_HISTORY_TABLE as string),
        mappings: createMappingStore(documents, process.env.TALLY_MAPPINGS_TABLE as string),
        reports,
      },
      { windowSize: 3, graceMs: 0, retentionMs: 24 * HOUR, pruneBudget: 100 },
    );
    const children = () =>
      Promise.all(
        Array.from({ length: SHARDS }, (_, shard) => reconciler.run(shardScope(shard, SHARDS))),
      );
    await children();
    expect(await consumersOf('tr.shared')).toEqual([...groups].sort());
    for (const [k, group] of groups.entries()) {
      expect(await consumersOf(`tr.own-${k}`)).toEqual([group]);
    }
    // ts-5's own topic is deleted; ts-3 starts reading another. Each shard's child runs (the
    // one owning ts-3 last): each moves its own groups' items only, the others' stay.
    cluster.topics.delete('tr.own-5');
    cluster.topics.set('tr.extra', [{ logStart: 0, logEnd: 9 }]);
    cluster.groups.set('ts-3', reads('tr.shared', 'tr.own-3', 'tr.extra'));
    const last = shardOf('ts-3', SHARDS);
    for (let shard = 0; shard < SHARDS; shard++) {
      if (shard !== last) await reconciler.run(shardScope(shard, SHARDS));
    }
    expect(await consumersOf('tr.extra')).toEqual([]);
    await reconciler.run(shardScope(last, SHARDS));
    expect(await consumersOf('tr.extra')).toEqual(['ts-3']);
    expect(await consumersOf('tr.own-5')).toEqual([]);
    expect(await consumersOf('tr.shared')).toEqual([...groups].sort());
    const list = await topicList();
    expect(list).toContain('tr.extra');
    expect(list).not.toContain('tr.own-5');
    expect(list.filter((t) => t.startsWith('tr.own-'))).toHaveLength(11);
  });

  it('answers as if no group read any topic until the first run after the upgrade writes the index', async () => {
    let now = START + 100 * HOUR;
    const cluster = new FakeCluster();
    cluster.topics.set('tr.upgrade', [{ logStart: 0, logEnd: 7 }]);
    cluster.groups.set('tr-old', {
      state: 'Empty',
      members: [],
      commits: new Map([['tr.upgrade#0', 7]]),
    });
    const reports = createReportStore(documents, reportsTable);
    const reconciler = createReconciler(
      {
        source: cluster.source(() => now),
        history: createOffsetHistory(documents, process.env.TALLY_OFFSET_HISTORY_TABLE as string),
        mappings: createMappingStore(documents, process.env.TALLY_MAPPINGS_TABLE as string),
        reports,
      },
      { windowSize: 3, graceMs: 0, retentionMs: 24 * HOUR, pruneBudget: 100 },
    );
    await reconciler.run();
    // What the code before the topic index left: the entry without topics, no topic items.
    const entry = (await reports.reportedGroups()).get('tr-old');
    expect(entry?.topics).toEqual(['tr.upgrade']);
    await reports.markReported('tr-old', entry?.markedAt ?? 0, entry?.digest);
    for (const [group, sk] of [
      ['~reconcile-topics', 'topic#tr.upgrade#group#tr-old'],
      ['~reconcile-topic-list', 'topic#tr.upgrade'],
    ]) {
      await documents.send(new DeleteCommand({ TableName: reportsTable, Key: { group, sk } }));
    }
    expect((await reports.reportedGroups()).get('tr-old')?.topics).toBeUndefined();

    // Until the next run: not in the list, 404 (the consumer routes answer as ever).
    expect(await topicList()).not.toContain('tr.upgrade');
    expect((await get(`${CLUSTER}/topic/tr.upgrade`)).status).toBe(404);
    expect((await get(`${CLUSTER}/consumer/tr-old`)).status).toBe(200);

    // The next run finds the entry without topics (its findings and mark unchanged: no dated
    // report due) and writes it with them, and the topic index.
    const dated = (await reports.groupReportsSince('tr-old', 0)).length;
    now += 60_000;
    await reconciler.run();
    expect((await reports.groupReportsSince('tr-old', 0)).length).toBe(dated);
    expect((await reports.reportedGroups()).get('tr-old')?.topics).toEqual(['tr.upgrade']);
    expect(await topicList()).toContain('tr.upgrade');
    expect(await consumersOf('tr.upgrade')).toEqual(['tr-old']);
    expect((await get(`${CLUSTER}/topic/tr.upgrade`)).body.offsets).toEqual([7]);
  });
});
