import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventSink } from '../../../../functions/adapters/eventbridge/event-sink.js';
import type { OutgoingEvent } from '../../../../functions/core/notify/events.js';
import { log } from '../../../../functions/platform/log.js';
import { type LocalEventBus, serveLocalEventBus } from '../../../../infra/local/event-bus.js';

// The EventBridge adapter (the real SDK client) against the local stack's PutEvents stand-in,
// which POSTs each event to a webhook: what `npm start` does with TALLY_LOCAL_NOTIFY_WEBHOOK.

describe('events through the local event bus to a webhook', () => {
  let webhook: Server;
  let bus: LocalEventBus;
  const received: Array<Record<string, unknown>> = [];
  let refuse = (_event: Record<string, unknown>) => false;

  beforeAll(async () => {
    webhook = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      if (refuse(event)) {
        response.writeHead(500).end();
        return;
      }
      received.push(event);
      response.writeHead(200).end();
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    const { port } = webhook.address() as AddressInfo;
    bus = await serveLocalEventBus({ webhookUrl: `http://127.0.0.1:${port}/`, log: () => {} });
  });
  afterAll(async () => {
    await bus.close();
    await new Promise<void>((resolve) => webhook.close(() => resolve()));
  });

  const events = (n: number): OutgoingEvent[] =>
    Array.from({ length: n }, (_, i) => ({
      source: 'tally.reconcile',
      detailType: 'Consumer Group Status',
      detail: { group: `g${i}`, state: 'open' },
    }));
  const sink = () =>
    createEventSink({
      region: 'us-east-1',
      eventBus: 'default',
      endpoint: bus.url,
      captureClient: (client) => client,
      log,
    });

  it('delivers every event, more than PutEvents takes at once, in the envelope EventBridge delivers', async () => {
    received.length = 0;
    expect(await sink().send(events(12))).toEqual(Array.from({ length: 12 }, () => true));
    expect(received.map((e) => (e.detail as { group: string }).group)).toEqual(
      Array.from({ length: 12 }, (_, i) => `g${i}`),
    );
    expect(received[0]).toMatchObject({
      version: '0',
      source: 'tally.reconcile',
      'detail-type': 'Consumer Group Status',
      detail: { group: 'g0', state: 'open' },
    });
    expect(received[0]?.id).toEqual(expect.any(String));
  });

  it('reports the events the webhook did not take as not accepted, the others as accepted', async () => {
    received.length = 0;
    refuse = (event) => (event.detail as { group: string }).group === 'g1';
    try {
      expect(await sink().send(events(3))).toEqual([true, false, true]);
    } finally {
      refuse = () => false;
    }
  });

  it('never rejects when EventBridge does not answer: nothing is accepted', async () => {
    const unreachable = createEventSink({
      region: 'us-east-1',
      eventBus: 'default',
      endpoint: 'http://127.0.0.1:9', // discard port: connection refused
      captureClient: (client) => client,
      log,
    });
    expect(await unreachable.send(events(2))).toEqual([false, false]);
  });
});
