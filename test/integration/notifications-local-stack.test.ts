import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../infra/local/stack.js';
import { setOffsets, testKafka } from '../helpers/kafka.js';
import { createTopic } from '../helpers/publish-client.js';
import { uniqueName } from '../helpers/unique-name.js';

// `npm start` with TALLY_LOCAL_NOTIFY_WEBHOOK: the functions served by serverless-offline (their
// bundles, serverless.yml's environment) put their events on the stack's bus, which POSTs them to
// the webhook. The scheduled reconcile may run between the test's own runs: it sends the same
// events, so the counts hold whichever run sends them.

describe('npm start: notifications to TALLY_LOCAL_NOTIFY_WEBHOOK', () => {
  const kafka = testKafka('tally-test-notify-stack');
  const admin: Admin = kafka.admin();
  const prefix = uniqueName('notify-stack');
  const received: Array<{ source: string; detail: Record<string, unknown> }> = [];
  let webhook: Server;
  let stack: LocalStack;
  const allowlist = process.env.TALLY_NOTIFY_GROUP_ALLOWLIST;

  beforeAll(async () => {
    webhook = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      response.writeHead(200).end();
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/`;
    // The functions inherit the shell's environment, as with `npm start`: only this file's groups.
    process.env.TALLY_NOTIFY_GROUP_ALLOWLIST = `^${prefix}`;
    stack = await startLocalStack({
      env: {
        KAFKA_BROKERS: inject('kafkaBrokers'),
        DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
        TALLY_LOCAL_NOTIFY_WEBHOOK: url,
      },
      api: true,
    });
    await admin.connect();
  });

  afterAll(async () => {
    await admin.disconnect();
    await stack?.stop();
    await new Promise<void>((resolve) => (webhook ? webhook.close(() => resolve()) : resolve()));
    if (allowlist === undefined) delete process.env.TALLY_NOTIFY_GROUP_ALLOWLIST;
    else process.env.TALLY_NOTIFY_GROUP_ALLOWLIST = allowlist;
  });

  it('POSTs one open event when a group goes bad and one close event when it recovers', async () => {
    const topic = await createTopic(admin, 1);
    const group = `${prefix}-g`;
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages: Array.from({ length: 10 }, () => ({ value: 'v' })) });
    await producer.disconnect();
    const commit = (offset: number) =>
      setOffsets({
        groupId: group,
        topic,
        partitions: [{ partition: 0, offset: String(offset) }],
      });
    // As a client would: a 503 the route marks retriable (dynalite slow beside a second suite:
    // "DynamoDB did not answer while storing group reports") is asked again, 3 times at most.
    const reconcileNow = async () => {
      for (let attempt = 1; ; attempt++) {
        const response = await fetch(
          `${stack.apiUrl}/v3/clusters/${stack.kafkaClusterId}/reconcile`,
          {
            method: 'POST',
            headers: { authorization: `Bearer ${stack.apiToken}` },
          },
        );
        const text = await response.text();
        const retriable = response.status === 503 && /"retriable":true/.test(text);
        if (retriable && attempt < 3) continue;
        expect(response.status, text).toBe(200);
        return;
      }
    };
    const states = () =>
      received
        .filter((e) => e.detail.group === group)
        .map((e) => `${e.detail.state} ${e.detail.status}`);

    await commit(10);
    await reconcileNow();
    expect(states()).toEqual([]);
    await commit(2);
    await reconcileNow();
    await reconcileNow();
    expect(states()).toEqual(['open ERR']);
    expect(received.find((e) => e.detail.group === group)).toMatchObject({
      source: 'tally.reconcile',
      'detail-type': 'Consumer Group Status',
    });
    await commit(10);
    await reconcileNow();
    await reconcileNow();
    expect(states()).toEqual(['open ERR', 'closed OK']);
  });
});
