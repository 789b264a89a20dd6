import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Admin, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createIncidentStore } from '../../functions/adapters/dynamodb/notify-state.js';
import {
  type AlarmTransition,
  createAlarmEvaluator,
  type Datapoint,
  emfDatapoints,
} from '../../infra/local/alarms.js';
import { type LocalEventBus, serveLocalEventBus } from '../../infra/local/event-bus.js';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { setOffsets, testKafka } from '../helpers/kafka.js';
import { createTopic, loadHandlers, produceEvent } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 14's "done when" for the notifier, on the real broker and DynamoDB API: the functions'
// EventBridge client talks to the local stack's PutEvents stand-in, which POSTs each event to a
// webhook (as `npm start` does with TALLY_LOCAL_NOTIFY_WEBHOOK); serverless.yml's own alarms are
// evaluated over the metrics each run emitted, one run per alarm period.

interface DeliveredEvent {
  readonly source: string;
  readonly 'detail-type': string;
  readonly detail: Record<string, unknown>;
}

describe('notifications: a group going bad, recovering, and an audit finding a loss', () => {
  const kafka = testKafka('tally-test-notifications');
  const admin: Admin = kafka.admin();
  let producer: Producer;
  let webhook: Server;
  let bus: LocalEventBus;
  let env: Record<string, string>;
  const delivered: DeliveredEvent[] = [];
  let webhookDown = false;
  // The broker is shared with other test files: only this file's groups are notified (Burrow's
  // allowlist), and the alarms see only their series (a `WHERE group = …` on the query).
  const prefix = uniqueName('notify');

  let reconcile: () => Promise<{ points: Datapoint[] }>;
  let audit: (topic: string) => Promise<Datapoint[]>;

  /** Runs `work`, returning what it wrote to stdout as EMF datapoints, besides its result. */
  async function withMetrics<T>(work: () => Promise<T>): Promise<[T, Datapoint[]]> {
    const lines: string[] = [];
    const keep = (chunk: unknown) => void lines.push(String(chunk));
    vi.spyOn(console, 'log').mockImplementation(keep);
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
      keep(chunk);
      return true;
    });
    try {
      const result = await work();
      const documents = lines
        .flatMap((l) => l.split('\n'))
        .filter((l) => l.includes('"_aws"'))
        .map((l) => JSON.parse(l) as object);
      return [result, emfDatapoints(documents)];
    } finally {
      vi.restoreAllMocks();
    }
  }

  beforeAll(async () => {
    webhook = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      if (webhookDown) {
        response.writeHead(503).end();
        return;
      }
      delivered.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as DeliveredEvent);
      response.writeHead(204).end();
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    const webhookUrl = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/events`;
    bus = await serveLocalEventBus({ webhookUrl, log: () => {} });
    env = await usePublishEnv({
      TALLY_NOTIFY_EVENT_BUS: 'default',
      TALLY_EVENTBRIDGE_ENDPOINT: bus.url,
      TALLY_NOTIFY_GROUP_ALLOWLIST: `^${prefix}`,
      TALLY_AUDIT_HORIZON_SECONDS: '0',
    });
    await admin.connect();
    producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const reconcileTask = (await import('../../functions/reconcile/task-handler.js')).handler;
    reconcile = async () => {
      const [, points] = await withMetrics(() =>
        reconcileTask(
          { source: 'aws.events', 'detail-type': 'Scheduled Event' },
          lambdaContext(120_000),
        ),
      );
      return { points };
    };
    const auditNow = (await import('../../functions/audit/http-handler.js')).handler;
    audit = async (topic) => {
      const [response, points] = await withMetrics(
        async () =>
          (await auditNow(
            httpEvent({
              pathParameters: { cluster_id: inject('kafkaClusterId') },
              body: JSON.stringify({ topic }),
            }),
            lambdaContext(),
          )) as { statusCode: number; body: string },
      );
      expect(response.statusCode, response.body).toBe(200);
      return points;
    };
  });

  afterAll(async () => {
    await producer?.disconnect();
    await admin.disconnect();
    await bus?.close();
    await new Promise<void>((resolve) => (webhook ? webhook.close(() => resolve()) : resolve()));
  });

  /** Only the datapoints of one series (this file's group or topic). */
  const onlyOurs =
    (dimension: string, value: string) =>
    (points: readonly Datapoint[]): Datapoint[] =>
      points.filter((p) => p.dimensions[dimension] === value);

  /** The group's status in a run, from its GroupStatus metric (Burrow's numbers). */
  const statusOf = (points: readonly Datapoint[], group: string) => {
    const codes = points
      .filter((p) => p.metric === 'GroupStatus' && p.dimensions.group === group)
      .map((p) => p.value);
    expect(codes, `GroupStatus of ${group}`).toHaveLength(1);
    return ['OK', 'WARN', 'ERR'][(codes[0] as number) - 1];
  };

  it('sends exactly one open event and one alarm change when a group goes bad, one close event when it recovers', async () => {
    const topic = await createTopic(admin, 1);
    const group = `${prefix}-billing`;
    await producer.send({
      topic,
      acks: -1,
      messages: Array.from({ length: 20 }, (_, i) => ({ partition: 0, value: `v${i}` })),
    });
    const commit = (offset: number) =>
      setOffsets({
        groupId: group,
        topic,
        partitions: [{ partition: 0, offset: String(offset) }],
      });
    const alarms = createAlarmEvaluator();
    const ours = onlyOurs('group', group);
    const statusAlarm = (points: Datapoint[]): AlarmTransition[] =>
      alarms.period(ours(points)).filter((t) => t.alarm === 'GroupStatusErrAlarm');
    const events = () => delivered.filter((e) => e.detail.group === group);

    // Caught up: OK, nothing sent; the alarm leaves INSUFFICIENT_DATA for OK.
    await commit(20);
    let run = await reconcile();
    expect(statusOf(run.points, group)).toBe('OK');
    expect(statusAlarm(run.points)).toEqual([
      { alarm: 'GroupStatusErrAlarm', from: 'INSUFFICIENT_DATA', to: 'OK' },
    ]);

    // Rewound to 5: ERR. One open event, one alarm change.
    await commit(5);
    run = await reconcile();
    expect(statusOf(run.points, group)).toBe('ERR');
    expect(statusAlarm(run.points)).toEqual([
      { alarm: 'GroupStatusErrAlarm', from: 'OK', to: 'ALARM' },
    ]);
    expect(events()).toHaveLength(1);
    expect(events()[0]).toMatchObject({
      source: 'tally.reconcile',
      'detail-type': 'Consumer Group Status',
      detail: {
        group,
        cluster: inject('kafkaClusterId'),
        state: 'open',
        reason: 'opened',
        status: 'ERR',
        totalLag: 15,
        partitions: [{ topic, partition: 0, status: 'REWIND', currentLag: 15 }],
      },
    });
    const opened = events()[0]?.detail.incident as { id: string } | undefined;
    expect(opened?.id).toEqual(expect.any(String));

    // Still bad, runs within the interval: nothing more, and the alarm stays where it is.
    for (let i = 0; i < 3; i++) {
      run = await reconcile();
      expect(statusOf(run.points, group)).toBe('ERR');
      expect(statusAlarm(run.points)).toEqual([]);
    }
    expect(events()).toHaveLength(1);

    // Back at the log end: one close event for the same incident, the alarm back to OK.
    await commit(20);
    run = await reconcile();
    expect(statusOf(run.points, group)).toBe('OK');
    expect(statusAlarm(run.points)).toEqual([
      { alarm: 'GroupStatusErrAlarm', from: 'ALARM', to: 'OK' },
    ]);
    run = await reconcile();
    expect(statusAlarm(run.points)).toEqual([]);
    expect(events().map((e) => [e.detail.state, e.detail.status])).toEqual([
      ['open', 'ERR'],
      ['closed', 'OK'],
    ]);
    expect(events()[1]?.detail).toMatchObject({ reason: 'cleared', incident: { id: opened?.id } });
    // No incident is kept for a group that is fine.
    const client = localDynamoDbClient(env.DYNAMODB_ENDPOINT as string);
    const documents = DynamoDBDocumentClient.from(client);
    const open = await createIncidentStore(
      documents,
      env.TALLY_RECONCILE_REPORTS_TABLE as string,
    ).load();
    client.destroy();
    expect(open.has(group)).toBe(false);
  });

  it('sends the open event on a later run when the webhook was down, without failing reconcile', async () => {
    const topic = await createTopic(admin, 1);
    const group = `${prefix}-retry`;
    await producer.send({
      topic,
      acks: -1,
      messages: [
        { partition: 0, value: 'a' },
        { partition: 0, value: 'b' },
      ],
    });
    await setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '2' }] });
    await reconcile();
    await setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '0' }] });
    webhookDown = true;
    let run: Awaited<ReturnType<typeof reconcile>>;
    try {
      run = await reconcile();
    } finally {
      webhookDown = false;
    }
    expect(statusOf(run.points, group)).toBe('ERR');
    expect(
      run.points.filter((p) => p.metric === 'NotificationsFailed').map((p) => p.value),
    ).toEqual([1]);
    expect(delivered.filter((e) => e.detail.group === group)).toEqual([]);
    await reconcile();
    await reconcile();
    expect(delivered.filter((e) => e.detail.group === group).map((e) => e.detail.state)).toEqual([
      'open',
    ]);
  });

  it('sends one event when an audit finds records lost, and none while the loss stays the same', async () => {
    const api = await loadHandlers();
    const topic = await createTopic(admin, 1);
    const body = ['a', 'b', 'c', 'd', 'e']
      .map((v) => JSON.stringify({ value: { type: 'STRING', data: v } }))
      .join('');
    expect((await api.produce(produceEvent(topic, body))).statusCode).toBe(200);
    await admin.fetchTopicOffsets(topic); // the admin's metadata now knows the topic
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '2' }] });
    const alarms = createAlarmEvaluator();
    const ours = onlyOurs('topic', topic);
    const lostAlarm = (points: Datapoint[]) =>
      alarms.period(ours(points)).filter((t) => t.alarm === 'LostRecordsAlarm');
    const events = () => delivered.filter((e) => e.detail.topic === topic);

    expect(lostAlarm(await audit(topic))).toEqual([
      { alarm: 'LostRecordsAlarm', from: 'INSUFFICIENT_DATA', to: 'ALARM' },
    ]);
    expect(events()).toEqual([
      expect.objectContaining({
        source: 'tally.audit',
        'detail-type': 'Audit Finding',
        detail: expect.objectContaining({
          topic,
          stream: topic,
          lost: 2,
          lostRanges: [{ from: 1, to: 2 }],
          duplicates: { producer: 0, consumer: {} },
        }),
      }),
    ]);
    expect(lostAlarm(await audit(topic))).toEqual([]);
    expect(events()).toHaveLength(1);
  });
});
