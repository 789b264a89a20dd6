import { DeleteCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Admin, Consumer, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { GroupReport, PartitionReport } from '../../functions/core/reconcile/ports.js';
import type { ReconcileReport } from '../../functions/core/reconcile/reconciler.js';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { setOffsets, testKafka } from '../helpers/kafka.js';
import { createTopic } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { uniqueName } from '../helpers/unique-name.js';

// Reconcile against real consumer groups on the local broker, and the DynamoDB API.
describe('reconcile', () => {
  const kafka = testKafka('tally-test-reconcile');
  const admin: Admin = kafka.admin();
  let producer: Producer;
  let env: Record<string, string>;
  let documents: DynamoDBDocumentClient;
  let reconcile: () => Promise<ReconcileReport>;
  let http: Awaited<typeof import('../../functions/reconcile/http-handler.js')>['handler'];
  let restore: Awaited<typeof import('../../functions/reconcile/restore-handler.js')>['handler'];
  let burrow: Awaited<typeof import('../../functions/reconcile/burrow-handler.js')>['handler'];
  let consumerGroup: Awaited<
    typeof import('../../functions/reconcile/consumer-group-handler.js')
  >['handler'];

  const groupOf = (report: ReconcileReport, group: string): GroupReport => {
    const found = report.groups.find((g) => g.group === group);
    if (!found) throw new Error(`group ${group} not in the report`);
    return found;
  };
  const partitionOf = (
    report: ReconcileReport,
    group: string,
    partition: number,
  ): PartitionReport => {
    const found = groupOf(report, group).partitions.find((p) => p.partition === partition);
    if (!found) throw new Error(`partition ${partition} of ${group} not in the report`);
    return found;
  };

  async function produce(topic: string, count: number, partition = 0) {
    await producer.send({
      topic,
      acks: -1,
      messages: Array.from({ length: count }, (_, i) => ({
        partition,
        key: `k${i}`,
        value: `v${i}`,
      })),
    });
  }

  /** Consumes until `count` records were read from the beginning, committing each, then leaves. */
  async function consumeAndLeave(groupId: string, topic: string, count: number): Promise<Consumer> {
    const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1000 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    let seen = 0;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`consumed ${seen}/${count}`)), 30_000);
      consumer
        .run({
          autoCommit: false,
          eachMessage: async ({ partition, message }) => {
            await consumer.commitOffsets([
              { topic, partition, offset: String(Number(message.offset) + 1) },
            ]);
            if (++seen === count) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
    await consumer.disconnect();
    return consumer;
  }

  beforeAll(async () => {
    env = await usePublishEnv({ TALLY_RECONCILE_WINDOW: '5', TALLY_MAPPING_GRACE_SECONDS: '0' });
    documents = DynamoDBDocumentClient.from(localDynamoDbClient(inject('dynamodbEndpoint')));
    await admin.connect();
    producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    // The whole report (the task handler returns a summary of it: reconcile-summary.ts).
    const { reconcileRuntime } = await import('../../functions/reconciling/runtime.js');
    reconcile = async () => (await reconcileRuntime()).reconciler.run();
    http = (await import('../../functions/reconcile/http-handler.js')).handler;
    restore = (await import('../../functions/reconcile/restore-handler.js')).handler;
    burrow = (await import('../../functions/reconcile/burrow-handler.js')).handler;
    consumerGroup = (await import('../../functions/reconcile/consumer-group-handler.js')).handler;
  });

  afterAll(async () => {
    await producer.disconnect();
    await admin.disconnect();
  });

  it('reports a caught-up group OK and maps its client to the group', async () => {
    const topic = await createTopic(admin, 1);
    const group = uniqueName('g-ok');
    await produce(topic, 10);
    const consumer = kafka.consumer({
      groupId: group,
      sessionTimeout: 10_000,
      heartbeatInterval: 1000,
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    let seen = 0;
    await new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async () => {
          if (++seen === 10) resolve();
        },
      });
    });
    await consumer.commitOffsets([{ topic, partition: 0, offset: '10' }]);
    try {
      const report = await reconcile();
      expect(report.complete).toBe(true);
      expect(report.adminCalls).toBeGreaterThan(0);
      const g = groupOf(report, group);
      expect(g.state).toBe('Stable');
      expect(g.status).toBe('OK');
      expect(partitionOf(report, group, 0)).toMatchObject({
        status: 'OK',
        currentLag: 0,
        committed: 10,
        logEnd: 10,
      });
      expect(partitionOf(report, group, 0).owner).toMatch(/tally-test-reconcile/);

      // The client → group mapping, deleted behind reconcile's back, is repaired on the next run.
      const member = partitionOf(report, group, 0);
      const { Item } = await documents.send(
        new GetCommand({
          TableName: env.TALLY_MAPPINGS_TABLE,
          Key: { pk: `group#${group}`, sk: `partition#${topic}#0` },
        }),
      );
      expect(Item).toMatchObject({ memberId: member.owner, clientId: 'tally-test-reconcile' });
      const clientKey = {
        pk: `client#${Item?.clientHost}#tally-test-reconcile`,
        sk: `group#${group}`,
      };
      await documents.send(
        new DeleteCommand({ TableName: env.TALLY_MAPPINGS_TABLE, Key: clientKey }),
      );
      const next = await reconcile();
      expect(next.mappings.details).toContainEqual({ action: 'written', ...clientKey });
      const repaired = await documents.send(
        new GetCommand({ TableName: env.TALLY_MAPPINGS_TABLE, Key: clientKey }),
      );
      expect(repaired.Item).toMatchObject({ groupId: group });
    } finally {
      await consumer.disconnect();
    }
  });

  it('flags a rewind with the number of records that will be consumed again, and restores it', async () => {
    const topic = await createTopic(admin, 1);
    const group = uniqueName('g-rewind');
    await produce(topic, 20);
    await consumeAndLeave(group, topic, 20);
    expect(partitionOf(await reconcile(), group, 0)).toMatchObject({ status: 'OK', committed: 20 });
    await setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '6' }] });
    const rewound = partitionOf(await reconcile(), group, 0);
    expect(rewound.status).toBe('REWIND');
    expect(rewound.rewind).toEqual({ from: 20, to: 6, recordsToReconsume: 14 });

    const call = (body?: string) =>
      restore(
        httpEvent({
          pathParameters: { cluster_id: inject('kafkaClusterId'), group_id: group },
          ...(body !== undefined && { body }),
        }),
        lambdaContext(),
      ) as Promise<{ statusCode: number; body: string }>;
    const dryRun = await call();
    expect(dryRun.statusCode).toBe(200);
    const plan = JSON.parse(dryRun.body);
    expect(plan).toMatchObject({ dryRun: true, csv: `${topic},0,20\n` });
    expect(plan.partitions[0]).toMatchObject({ current: 6, target: 20 });
    const executed = await call('{"execute": true}');
    expect(executed.statusCode).toBe(200);
    expect(JSON.parse(executed.body).executed.partitions).toEqual([
      { topic, partition: 0, before: 6, after: 20 },
    ]);
    const committed = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    expect(committed[0]?.partitions[0]?.offset).toBe('20');
  });

  it('pages reconcile-now and a restore (dry run and executed) by limit and cursor, each item once', async () => {
    const topic = await createTopic(admin, 3);
    const group = uniqueName('g-pages');
    for (let partition = 0; partition < 3; partition++) await produce(topic, 10, partition);
    await consumeAndLeave(group, topic, 30);
    // A second group, so that even alone this test has a run of more than one page.
    await consumeAndLeave(`${group}-other`, topic, 30);
    await reconcile();
    await setOffsets({
      groupId: group,
      topic,
      partitions: [0, 1, 2].map((partition) => ({ partition, offset: '2' })),
    });
    const cluster = inject('kafkaClusterId');
    type Answer = { statusCode: number; body: string };
    /** Calls `handler` with the query of `url` (a `next` link) or `query`; the parsed answer. */
    const page = async (
      handler: typeof http,
      query: Record<string, string>,
      extra: { pathParameters?: Record<string, string>; body?: string } = {},
    ) => {
      const answer = (await handler(
        httpEvent({
          pathParameters: { cluster_id: cluster, ...extra.pathParameters },
          query,
          ...(extra.body !== undefined && { body: extra.body }),
        }),
        lambdaContext(),
      )) as Answer;
      return { status: answer.statusCode, body: JSON.parse(answer.body) };
    };
    const queryOf = (next: string) => Object.fromEntries(new URL(next).searchParams);

    // reconcile-now, one group a page: every group of the run once, the last page says so.
    const first = await page(http, { limit: '1' });
    expect(first.status).toBe(200);
    expect(first.body.groups).toHaveLength(1);
    expect(first.body.groupCount).toBeGreaterThan(1);
    expect(first.body.next).toMatch(new RegExp(`/v3/clusters/${cluster}/reconcile\\?cursor=`));
    const groups = [...first.body.groups.map((g: { group: string }) => g.group)];
    for (let next = first.body.next; next !== null; ) {
      const more = await page(http, queryOf(next));
      expect(more.body.runId).toBe(first.body.runId);
      groups.push(...more.body.groups.map((g: { group: string }) => g.group));
      next = more.body.next;
    }
    expect(groups).toHaveLength(first.body.groupCount);
    expect(new Set(groups).size).toBe(groups.length);
    expect(groups).toEqual(expect.arrayContaining([group, `${group}-other`]));

    // A restore, one partition a page: the plan, then the execution read from its record.
    const at = { pathParameters: { group_id: group } };
    const dry = await page(restore, { limit: '1' }, at);
    expect(dry.body).toMatchObject({ dryRun: true, partitionCount: 3, csv: `${topic},0,10\n` });
    const planned = [...dry.body.partitions];
    for (let next = dry.body.next; next !== null; ) {
      const more = await page(restore, queryOf(next), at);
      planned.push(...more.body.partitions);
      next = more.body.next;
    }
    expect(planned.map((p) => [p.partition, p.current, p.target])).toEqual([
      [0, 2, 10],
      [1, 2, 10],
      [2, 2, 10],
    ]);
    const executing = await page(restore, { limit: '2' }, { ...at, body: '{"execute": true}' });
    expect(executing.status).toBe(200);
    expect(executing.body.executed.partitionCount).toBe(3);
    const executed = [...executing.body.executed.partitions];
    const rest = await page(restore, queryOf(executing.body.next), at);
    expect(rest.body.next).toBeNull();
    executed.push(...rest.body.executed.partitions);
    expect(executed).toEqual(
      [0, 1, 2].map((partition) => ({ topic, partition, before: 2, after: 10 })),
    );

    // Bad pages are refused naming the field; nothing runs.
    const refused = [
      await page(http, { limit: '0' }),
      await page(http, { cursor: 'not a cursor' }),
      await page(
        restore,
        { cursor: String(executing.body.next).split('cursor=')[1]?.split('&')[0] ?? '' },
        { ...at, body: '{"execute": true}' },
      ),
    ];
    expect(refused.map((r) => [r.status, r.body.field])).toEqual([
      [400, 'limit'],
      [400, 'cursor'],
      [400, 'cursor'],
    ]);
  });

  it('refuses to restore a group that has members, naming its state', async () => {
    const topic = await createTopic(admin, 1);
    const group = uniqueName('g-active');
    await produce(topic, 5);
    await consumeAndLeave(group, topic, 5);
    await reconcile();
    await setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '1' }] });
    await reconcile();
    const consumer = kafka.consumer({
      groupId: group,
      sessionTimeout: 10_000,
      heartbeatInterval: 1000,
    });
    await consumer.connect();
    await consumer.subscribe({ topic });
    await new Promise<void>((resolve) => {
      consumer.on(consumer.events.GROUP_JOIN, () => resolve());
      void consumer.run({ eachMessage: async () => {} });
    });
    try {
      const response = (await restore(
        httpEvent({
          pathParameters: { cluster_id: inject('kafkaClusterId'), group_id: group },
          body: '{"execute": true}',
        }),
        lambdaContext(),
      )) as { statusCode: number; body: string };
      expect(response.statusCode).toBe(409);
      expect(JSON.parse(response.body).message).toMatch(
        /is (Stable|PreparingRebalance|CompletingRebalance)/,
      );
    } finally {
      await consumer.disconnect();
    }
  });

  it('flags LOST with the last good offset when the group offsets are deleted', async () => {
    const topic = await createTopic(admin, 1);
    const group = uniqueName('g-lost');
    await produce(topic, 8);
    await consumeAndLeave(group, topic, 8);
    await reconcile();
    await admin.deleteGroups([group]);
    const lost = partitionOf(await reconcile(), group, 0);
    expect(lost.status).toBe('LOST');
    expect(lost.lost?.lastGoodOffset).toBe(8);
  });

  it('keeps history whole when two runs overlap (overlapping schedules): no false REWIND or LOST', async () => {
    const topic = await createTopic(admin, 1);
    const group = uniqueName('g-overlap');
    await produce(topic, 6);
    await consumeAndLeave(group, topic, 6);
    await reconcile();
    const [a, b] = await Promise.all([reconcile(), reconcile()]);
    for (const report of [a, b]) {
      expect(report.complete).toBe(true);
      expect(partitionOf(report, group, 0)).toMatchObject({ committed: 6 });
      expect(['REWIND', 'LOST']).not.toContain(partitionOf(report, group, 0).status);
    }
    // A later run reads the history both wrote (conditional writes: one may have lost and said
    // so in historyConflicts) and still sees one consistent window.
    const next = partitionOf(await reconcile(), group, 0);
    expect(next).toMatchObject({ committed: 6 });
    expect(['REWIND', 'LOST']).not.toContain(next.status);
  });

  it('keeps working after a topic it read is deleted (kafkajs keeps stale metadata targets)', async () => {
    // Clients of this test only: a deleted topic would poison the shared ones the same way.
    const own = testKafka('tally-test-deleted-topic');
    const ownAdmin = own.admin();
    const ownProducer = own.producer();
    await Promise.all([ownAdmin.connect(), ownProducer.connect()]);
    const topic = await createTopic(ownAdmin, 1);
    const group = uniqueName('g-deleted-topic');
    await ownProducer.send({ topic, acks: -1, messages: [{ value: 'a' }, { value: 'b' }] });
    await ownProducer.disconnect();
    await consumeAndLeave(group, topic, 2);
    await reconcile(); // the reconcile admin client now asks about this topic on every refresh
    await ownAdmin.deleteGroups([group]);
    await ownAdmin.deleteTopics({ topics: [topic] });
    await ownAdmin.disconnect();
    const after = await reconcile();
    expect(after.groups.some((g) => g.group === group)).toBe(false);
  });

  it('flags OUT_OF_RANGE with the number of records deleted before they were consumed', async () => {
    const topic = await createTopic(admin, 1);
    const group = uniqueName('g-range');
    await produce(topic, 5);
    await consumeAndLeave(group, topic, 5);
    await produce(topic, 20);
    await reconcile();
    // kafkajs finds the partition leader only in metadata it already holds for the topic.
    await admin.fetchTopicOffsets(topic);
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '15' }] });
    const out = partitionOf(await reconcile(), group, 0);
    expect(out.status).toBe('OUT_OF_RANGE');
    expect(out.outOfRange).toEqual({ side: 'BELOW_LOG_START', records: 10 });
  });

  it('serves Burrow-compatible status and lag, and 404 NOTFOUND for an unknown group', async () => {
    const topic = await createTopic(admin, 2);
    const group = uniqueName('g-burrow');
    await produce(topic, 6, 0);
    await produce(topic, 4, 1);
    await consumeAndLeave(group, topic, 10);
    await produce(topic, 3, 1);
    await reconcile();
    const get = async (g: string, path: 'status' | 'lag') =>
      (await burrow(
        {
          ...httpEvent({ pathParameters: { cluster: inject('kafkaClusterId'), group: g } }),
          rawPath: `/v3/kafka/${inject('kafkaClusterId')}/consumer/${g}/${path}`,
        },
        lambdaContext(),
      )) as { statusCode: number; body: string };
    const lag = JSON.parse((await get(group, 'lag')).body);
    expect(lag.error).toBe(false);
    expect(lag.status).toMatchObject({ group, partition_count: 2, totallag: 3 });
    expect(lag.status.partitions).toHaveLength(2);
    expect(lag.status.maxlag).toMatchObject({ partition: 1, current_lag: 3 });
    const confluent = (await consumerGroup(
      httpEvent({ pathParameters: { cluster_id: inject('kafkaClusterId'), group_id: group } }),
      lambdaContext(),
    )) as { statusCode: number; body: string };
    expect(JSON.parse(confluent.body)).toMatchObject({
      kind: 'KafkaConsumerGroup',
      consumer_group_id: group,
      state: 'EMPTY',
      lag_summary: { max_lag: 3, total_lag: 3, max_lag_partition_id: 1 },
    });
    const missing = await get(uniqueName('nobody'), 'status');
    expect(missing.statusCode).toBe(404);
    expect(JSON.parse(missing.body).status.status).toBe('NOTFOUND');
    const now = (await http(
      httpEvent({ pathParameters: { cluster_id: inject('kafkaClusterId') } }),
      lambdaContext(),
    )) as { statusCode: number; body: string };
    expect(now.statusCode).toBe(200);
    const answer = JSON.parse(now.body);
    expect(answer.groups.map((g: GroupReport) => g.group)).toContain(group);
    // What a person reads first: what the run found and what it repaired, in words.
    expect(answer.found).toMatch(
      /^\d+ consumer groups? over \d+ partitions?: \d+ OK, \d+ WARN, \d+ ERR/,
    );
    expect(answer.repaired).toMatch(/(mappings: \d+ written|nothing needed repair)/);
    expect(answer.repaired).toContain('/restore');
  });

  it('judges a group without commits STOP, a live consumer not moving STALL, and one falling behind WARN', async () => {
    const topic = await createTopic(admin, 1);
    const stopped = uniqueName('g-stop');
    await produce(topic, 20);
    await setOffsets({
      groupId: stopped,
      topic,
      partitions: [{ partition: 0, offset: '5' }],
    });
    await reconcile();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(partitionOf(await reconcile(), stopped, 0)).toMatchObject({
      status: 'STOP',
      currentLag: 15,
    });

    // A member that holds the partition but makes no progress.
    const stalled = uniqueName('g-stall');
    await setOffsets({
      groupId: stalled,
      topic,
      partitions: [{ partition: 0, offset: '5' }],
    });
    const consumer = kafka.consumer({
      groupId: stalled,
      sessionTimeout: 10_000,
      heartbeatInterval: 1000,
    });
    await consumer.connect();
    await consumer.subscribe({ topic });
    await new Promise<void>((resolve) => {
      consumer.on(consumer.events.GROUP_JOIN, () => resolve());
      void consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: async () => {
          consumer.pause([{ topic }]);
        },
      });
    });
    try {
      await reconcile();
      await reconcile();
      expect(partitionOf(await reconcile(), stalled, 0)).toMatchObject({
        status: 'STALL',
        currentLag: 15,
      });
      // It commits a little while records arrive faster: lag never decreases.
      for (const offset of [7, 9]) {
        await produce(topic, 10);
        await consumer.commitOffsets([{ topic, partition: 0, offset: String(offset) }]);
        await reconcile();
      }
      const behind = partitionOf(await reconcile(), stalled, 0);
      expect(behind.status).toBe('WARN');
      expect(behind.currentLag).toBe(31);
      expect(behind.timeLagSeconds).toBeGreaterThanOrEqual(0);
    } finally {
      await consumer.disconnect();
    }
  });
});
