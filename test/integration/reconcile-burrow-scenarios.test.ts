import type { Admin, Consumer, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { PartitionReport } from '../../functions/core/reconcile/ports.js';
import type { ReconcileReport } from '../../functions/core/reconcile/reconciler.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { setOffsets, testKafka } from '../helpers/kafka.js';
import { createTopic } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 14's scenarios on the real local broker: runs land wherever they land relative to a
// consumer's production and commits, and the status must not depend on it.
const WINDOW = 10;

describe('reconcile: Burrow scenarios on the real broker', () => {
  const kafka = testKafka('tally-test-burrow-scenarios');
  const admin: Admin = kafka.admin();
  let producer: Producer;
  let reconcile: () => Promise<ReconcileReport>;
  let restore: Awaited<typeof import('../../functions/reconcile/restore-handler.js')>['handler'];
  let burrow: Awaited<typeof import('../../functions/reconcile/burrow-handler.js')>['handler'];
  let acknowledge: Awaited<
    typeof import('../../functions/reconcile/acknowledge-handler.js')
  >['handler'];
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  const partitionOf = (report: ReconcileReport, group: string): PartitionReport => {
    const found = report.groups.find((g) => g.group === group)?.partitions[0];
    if (!found) throw new Error(`group ${group} not in the report`);
    return found;
  };

  async function produce(topic: string, count: number) {
    await producer.send({
      topic,
      acks: -1,
      messages: Array.from({ length: count }, (_, i) => ({ partition: 0, value: `v${i}` })),
    });
  }

  /** A member that owns the topic's partition and commits only what the test tells it to. */
  async function idleMember(groupId: string, topic: string): Promise<Consumer> {
    const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1000 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve) => {
      consumer.on(consumer.events.GROUP_JOIN, () => resolve());
      void consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: async () => consumer.pause([{ topic }]),
      });
    });
    return consumer;
  }

  beforeAll(async () => {
    await usePublishEnv({ TALLY_RECONCILE_WINDOW: String(WINDOW) });
    await admin.connect();
    producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const { reconcileRuntime } = await import('../../functions/reconciling/runtime.js');
    reconcile = async () => (await reconcileRuntime()).reconciler.run();
    restore = (await import('../../functions/reconcile/restore-handler.js')).handler;
    burrow = (await import('../../functions/reconcile/burrow-handler.js')).handler;
    acknowledge = (await import('../../functions/reconcile/acknowledge-handler.js')).handler;
  });

  afterAll(async () => {
    await producer.disconnect();
    await admin.disconnect();
  });

  it('answers 404 to a restore or acknowledge of a group neither Kafka nor the history knows', async () => {
    const cluster = inject('kafkaClusterId');
    const group = uniqueName('g-never');
    const call = async (
      route: typeof restore | typeof acknowledge,
      body?: string,
    ): Promise<{ statusCode: number; body: string }> =>
      (await route(
        httpEvent({
          pathParameters: { cluster_id: cluster, group_id: group },
          ...(body !== undefined && { body }),
        }),
        lambdaContext(),
      )) as { statusCode: number; body: string };
    for (const answer of [
      await call(restore),
      await call(restore, '{"execute": true}'),
      await call(acknowledge),
    ]) {
      expect(answer.statusCode, answer.body).toBe(404);
      expect(JSON.parse(answer.body)).toMatchObject({ error_code: 404, retriable: false });
      expect(answer.body).toContain(group);
    }
  });

  it('executes a restore of a group Kafka deleted (Dead: no members), committing its last good offset', async () => {
    const topic = await createTopic(admin, 1);
    const group = uniqueName('g-dead');
    await produce(topic, 8);
    await setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '5' }] });
    await reconcile();
    await admin.deleteGroups([group]);
    const afterDelete = await reconcile();
    expect(partitionOf(afterDelete, group)).toMatchObject({ status: 'LOST' });
    // Its state as Kafka names a group it does not have (DescribeGroups answers Dead).
    expect(afterDelete.groups.find((g) => g.group === group)?.state).toBe('Dead');
    const executed = (await restore(
      httpEvent({
        pathParameters: { cluster_id: inject('kafkaClusterId'), group_id: group },
        body: '{"execute": true}',
      }),
      lambdaContext(),
    )) as { statusCode: number; body: string };
    expect(executed.statusCode, executed.body).toBe(200);
    expect(JSON.parse(executed.body).executed.partitions).toEqual([
      { topic, partition: 0, before: null, after: 5 },
    ]);
    const [committed] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    expect(committed?.partitions[0]?.offset).toBe('5');
  });

  it('a consumer committing every second while falling behind is WARN in every run', async () => {
    const topic = await createTopic(admin, 1);
    const group = uniqueName('g-behind');
    await produce(topic, 50);
    const consumer = await idleMember(group, topic);
    let committed = 0;
    const commit = async () => {
      committed += 5;
      await consumer.commitOffsets([{ topic, partition: 0, offset: String(committed) }]);
    };
    // Each second: 20 records produced, then 5 more committed. Runs land between production and
    // commit ("between"), after the commit, a few seconds apart and a fraction of a second apart.
    const between = new Set([4, 7, 8, 11, 14, 15]);
    const after = new Set([1, 3, 4, 7, 10, 11, 14, 18]);
    const statuses: Array<{ second: number; when: string; status: string; lag: number | null }> =
      [];
    const look = async (second: number, when: string) => {
      const p = partitionOf(await reconcile(), group);
      statuses.push({ second, when, status: p.status, lag: p.currentLag });
    };
    try {
      for (let second = 1; second <= 18; second++) {
        const started = Date.now();
        await produce(topic, 20);
        if (between.has(second)) await look(second, 'between');
        await sleep(100);
        await commit();
        if (after.has(second)) await look(second, 'after');
        await sleep(Math.max(0, 1000 - (Date.now() - started)));
      }
    } finally {
      await consumer.disconnect();
    }
    // The first run has seen one commit only; every later one is WARN, its lag growing.
    const judged = statuses.slice(1);
    expect(
      judged.map((s) => s.status),
      JSON.stringify(statuses),
    ).toEqual(judged.map(() => 'WARN'));
    expect(judged.some((s) => s.when === 'between')).toBe(true);
    expect(judged[judged.length - 1]?.lag).toBe(50 + 18 * 20 - committed);
  });

  it('a caught-up consumer that dies turns STOP within one window of runs', async () => {
    const topic = await createTopic(admin, 1);
    const group = uniqueName('g-dies');
    const consumer = await idleMember(group, topic);
    let end = 0;
    const statuses: string[] = [];
    // Alive: it reads everything produced each second and commits it.
    for (let second = 0; second < 4; second++) {
      await produce(topic, 10);
      end += 10;
      await consumer.commitOffsets([{ topic, partition: 0, offset: String(end) }]);
      statuses.push(partitionOf(await reconcile(), group).status);
      await sleep(500);
    }
    expect(statuses).toEqual(['OK', 'OK', 'OK', 'OK']);
    await consumer.disconnect();
    // Dead: production goes on; within one window of runs it reads STOP, and stays STOP.
    const afterDeath: string[] = [];
    for (let run = 0; run < WINDOW + 3; run++) {
      await produce(topic, 10);
      afterDeath.push(partitionOf(await reconcile(), group).status);
      await sleep(500);
    }
    const firstStop = afterDeath.indexOf('STOP');
    expect(firstStop, afterDeath.join()).toBeGreaterThanOrEqual(0);
    expect(firstStop).toBeLessThanOrEqual(WINDOW);
    expect(
      afterDeath.slice(firstStop).every((s) => s === 'STOP'),
      afterDeath.join(),
    ).toBe(true);
  });

  it('a lost commit is still LOST, restorable and reported with its real lag twenty runs later', async () => {
    const topic = await createTopic(admin, 1);
    const group = uniqueName('g-lost');
    await produce(topic, 8);
    await setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '8' }] });
    expect(partitionOf(await reconcile(), group)).toMatchObject({ committed: 8 });
    await admin.deleteGroups([group]);
    let logEnd = 8;
    for (let run = 1; run <= 20; run++) {
      await produce(topic, 3);
      logEnd += 3;
      const p = partitionOf(await reconcile(), group);
      expect(p, `run ${run}`).toMatchObject({
        status: 'LOST',
        committed: null,
        lost: { lastGoodOffset: 8 },
        currentLag: logEnd - 8,
      });
    }
    const cluster = inject('kafkaClusterId');
    const plan = (await restore(
      httpEvent({ pathParameters: { cluster_id: cluster, group_id: group } }),
      lambdaContext(),
    )) as { statusCode: number; body: string };
    expect(plan.statusCode).toBe(200);
    expect(JSON.parse(plan.body)).toMatchObject({
      dryRun: true,
      partitions: [{ topic, partition: 0, current: null, target: 8 }],
      csv: `${topic},0,8\n`,
    });
    const lag = (await burrow(
      {
        ...httpEvent({ pathParameters: { cluster, group } }),
        rawPath: `/v3/kafka/${cluster}/consumer/${group}/lag`,
      },
      lambdaContext(),
    )) as { statusCode: number; body: string };
    expect(JSON.parse(lag.body).status).toMatchObject({
      status: 'ERR',
      totallag: logEnd - 8,
      partitions: [{ status: 'LOST', current_lag: logEnd - 8 }],
    });

    // An admin acknowledges it: OK from the next run on (the commit is still gone).
    const acknowledgeEvent = (body?: string) =>
      httpEvent({
        pathParameters: { cluster_id: cluster, group_id: group },
        ...(body !== undefined && { body }),
      });
    const refused = (await acknowledge(acknowledgeEvent('{"all":true}'), lambdaContext())) as {
      statusCode: number;
      body: string;
    };
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('body');
    const acked = (await acknowledge(acknowledgeEvent(), lambdaContext())) as {
      statusCode: number;
      body: string;
    };
    expect(acked.statusCode).toBe(200);
    expect(JSON.parse(acked.body)).toEqual({
      group,
      acknowledged: [{ topic, partition: 0, status: 'LOST', committed: null }],
    });
    await produce(topic, 3);
    expect(partitionOf(await reconcile(), group)).toMatchObject({ status: 'OK', committed: null });
  });
});
