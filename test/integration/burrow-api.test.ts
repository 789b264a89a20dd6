import type { Admin, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { setOffsets, testKafka } from '../helpers/kafka.js';
import { createTopic } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { uniqueName } from '../helpers/unique-name.js';

// A Burrow client walks Tally's Burrow API from /v3/kafka down to a partition's status, knowing
// only Burrow's JSON (field names as Burrow writes them), against reconcile reports of a real
// group on the local broker.

interface Answer {
  statusCode: number;
  body: string;
}

describe("Burrow's read API", () => {
  const kafka = testKafka('tally-test-burrow-api');
  const admin: Admin = kafka.admin();
  let producer: Producer;
  let burrow: Awaited<typeof import('../../functions/reconcile/burrow-handler.js')>['handler'];
  let topic: string;
  let group: string;

  /** GET `path` as API Gateway would route it to the Burrow function. */
  const get = async (path: string) => {
    const event = { ...httpEvent({ routeKey: `GET ${path}` }), rawPath: path };
    const answer = (await burrow(event, lambdaContext())) as Answer;
    const body = answer.body.startsWith('{') ? JSON.parse(answer.body) : answer.body;
    return { status: answer.statusCode, body };
  };

  beforeAll(async () => {
    await usePublishEnv({ TALLY_BURROW_CLUSTER_NAME: 'Local-Tally' });
    await admin.connect();
    producer = kafka.producer();
    await producer.connect();
    topic = await createTopic(admin, 2);
    group = uniqueName('g-burrow-walk');
    await producer.send({
      topic,
      messages: [
        ...Array.from({ length: 6 }, () => ({ partition: 0, value: 'a' })),
        ...Array.from({ length: 4 }, () => ({ partition: 1, value: 'b' })),
      ],
    });
    await setOffsets({
      groupId: group,
      topic,
      partitions: [
        { partition: 0, offset: '6' },
        { partition: 1, offset: '1' },
      ],
    });
    const { reconcileRuntime } = await import('../../functions/reconciling/runtime.js');
    await (await reconcileRuntime()).reconciler.run();
    burrow = (await import('../../functions/reconcile/burrow-handler.js')).handler;
  });

  afterAll(async () => {
    await producer.disconnect();
    await admin.disconnect();
  });

  it('walks from the cluster list down to a partition status', async () => {
    expect(await get('/burrow/admin')).toEqual({ status: 200, body: 'GOOD' });

    const clusters = await get('/v3/kafka');
    expect(clusters.body).toMatchObject({ error: false, message: 'cluster list returned' });
    const [cluster] = clusters.body.clusters as string[];
    expect(cluster).toBe('Local-Tally');
    expect(clusters.body.request).toEqual({ url: '/v3/kafka', host: 'localhost' });

    // The cluster by configured name or Kafka's id, in any case.
    const detail = await get(`/v3/kafka/${cluster?.toUpperCase()}`);
    expect(detail.body).toMatchObject({
      error: false,
      message: 'cluster module detail returned',
      module: { 'class-name': 'kafka', servers: [inject('kafkaBrokers')] },
    });
    expect((await get(`/v3/kafka/${inject('kafkaClusterId').toLowerCase()}`)).status).toBe(200);

    const consumers = await get(`/v3/kafka/${cluster}/consumer`);
    expect(consumers.body.message).toBe('consumer list returned');
    expect(consumers.body.consumers).toContain(group);

    const consumer = await get(`/v3/kafka/${cluster}/consumer/${group}`);
    expect(consumer.body.message).toBe('consumer detail returned');
    const partitions = consumer.body.topics[topic] as Array<Record<string, unknown>>;
    expect(partitions).toHaveLength(2);
    expect(partitions[1]).toMatchObject({ 'current-lag': 3, owner: '' });
    expect(partitions[1]?.offsets).toEqual([expect.objectContaining({ offset: 1, lag: 3 })]);

    const lag = await get(`/v3/kafka/${cluster}/consumer/${group}/lag`);
    expect(lag.body).toMatchObject({ error: false, message: 'consumer status returned' });
    const status = lag.body.status;
    expect(status).toMatchObject({ cluster, group, partition_count: 2, totallag: 3 });
    expect(typeof status.complete).toBe('number');
    const p1 = (status.partitions as Array<Record<string, unknown>>).find(
      (p) => p.topic === topic && p.partition === 1,
    );
    expect(p1).toMatchObject({ current_lag: 3, end: { offset: 1, lag: 3 } });
    expect(['OK', 'WARN', 'STOP', 'STALL', 'REWIND']).toContain(p1?.status);
    const onlyBad = await get(`/v3/kafka/${cluster}/consumer/${group}/status`);
    expect(onlyBad.body.status.partitions.every((p: { status: string }) => p.status !== 'OK')).toBe(
      true,
    );
  });

  it('lists topics, their offsets and consumers', async () => {
    const topics = await get('/v3/kafka/local-tally/topic');
    expect(topics.body).toMatchObject({ error: false, message: 'topic list returned' });
    expect(topics.body.topics).toContain(topic);
    expect((await get(`/v3/kafka/local-tally/topic/${topic}`)).body).toMatchObject({
      message: 'topic offsets returned',
      offsets: [6, 4],
    });
    expect((await get(`/v3/kafka/local-tally/topic/${topic}/consumers`)).body).toMatchObject({
      message: 'consumers of topic returned',
      consumers: [group],
    });
  });

  it("answers Burrow's read-only config and log level from Tally's settings", async () => {
    const main = await get('/v3/config');
    expect(main.status).toBe(200);
    expect(main.body).toMatchObject({
      error: false,
      message: 'main config returned',
      logging: { level: expect.stringMatching(/^(debug|info|warn|error|fatal)$/) },
      zookeeper: { servers: [] },
    });
    expect(await get('/v3/config/cluster')).toMatchObject({
      status: 200,
      body: { message: 'module list returned', coordinator: 'cluster', modules: ['Local-Tally'] },
    });
    expect(await get('/v3/config/cluster/local-tally')).toMatchObject({
      status: 200,
      body: { message: 'cluster module detail returned', module: { 'class-name': 'kafka' } },
    });
    expect(await get('/v3/config/storage/default')).toMatchObject({
      status: 200,
      body: { message: 'storage module detail returned', module: { intervals: 10 } },
    });
    expect(await get('/v3/config/consumer/Local-Tally')).toMatchObject({
      status: 200,
      body: { module: { cluster: 'Local-Tally', servers: [inject('kafkaBrokers')] } },
    });
    expect(await get('/v3/config/notifier')).toMatchObject({ status: 200, body: { modules: [] } });
    expect(await get('/v3/config/evaluator/nope')).toMatchObject({
      status: 404,
      body: { error: true, message: 'evaluator module not found' },
    });
    expect(await get('/v3/admin/loglevel')).toMatchObject({
      status: 200,
      body: { error: false, message: 'log level returned', level: expect.any(String) },
    });
  });

  it("answers 404 with Burrow's bodies", async () => {
    const request = (url: string) => ({ url, host: 'localhost' });
    expect(await get('/v3/kafka/nope/consumer')).toEqual({
      status: 404,
      body: {
        error: true,
        message: 'cluster not found',
        request: request('/v3/kafka/nope/consumer'),
      },
    });
    // Burrow's cluster detail and topic detail name what they did not find.
    expect((await get('/v3/kafka/nope')).body.message).toBe('cluster module not found');
    expect((await get('/v3/kafka/nope/topic/t')).body.message).toBe('cluster or topic not found');
    const missingGroup = `/v3/kafka/local-tally/consumer/${uniqueName('nobody')}`;
    expect(await get(missingGroup)).toEqual({
      status: 404,
      body: {
        error: true,
        message: 'cluster or consumer not found',
        request: request(missingGroup),
      },
    });
    // An empty segment or one that is not valid percent-encoding names nothing (it was a look-up
    // of an empty group, a 500, found by fuzzing with real paths).
    for (const [path, sub] of [
      ['/v3/kafka/local-tally/consumer//status', 'status'],
      ['/v3/kafka/local-tally/consumer/%E0%A4%A/lag', 'lag'],
    ] as const) {
      const event = {
        ...httpEvent({
          routeKey: `GET /v3/kafka/{cluster}/consumer/{group}/${sub}`,
          pathParameters: { cluster: 'local-tally', group: path.split('/')[5] as string },
        }),
        rawPath: path,
      };
      const answer = (await burrow(event, lambdaContext())) as Answer;
      expect(answer.statusCode, path).toBe(404);
      expect(JSON.parse(answer.body), path).toEqual({
        error: true,
        message: 'cluster or consumer not found',
        request: request(path),
      });
    }
    // An unknown cluster's /status and /lag: Burrow's evaluator answers NOTFOUND for a cluster
    // or group its storage does not have, the same status object with `error: false`.
    for (const sub of ['status', 'lag']) {
      const path = `/v3/kafka/nope/consumer/${group}/${sub}`;
      expect(await get(path), path).toEqual({
        status: 404,
        body: {
          error: false,
          message: 'consumer status returned',
          status: {
            cluster: 'nope',
            group,
            status: 'NOTFOUND',
            complete: 1,
            partitions: [],
            partition_count: 0,
            maxlag: null,
            totallag: 0,
          },
          request: request(path),
        },
      });
    }
    const missingTopic = '/v3/kafka/local-tally/topic/no-such-topic';
    expect((await get(missingTopic)).body.message).toBe('cluster or topic not found');
    const notFound = await get(`${missingGroup}/status`);
    expect(notFound.status).toBe(404);
    expect(notFound.body).toMatchObject({
      error: false,
      message: 'consumer status returned',
      status: { status: 'NOTFOUND', complete: 1, partitions: [], maxlag: null, totallag: 0 },
    });
  });
});
