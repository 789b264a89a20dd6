import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

// EventBridge's PutEvents for the local stack: the functions' EventBridge client is pointed here
// (TALLY_EVENTBRIDGE_ENDPOINT), and each event is POSTed as JSON, in the envelope EventBridge
// delivers to its targets, to the webhook TALLY_LOCAL_NOTIFY_WEBHOOK names. An entry is accepted
// only when the webhook answered 2xx, so a webhook that is down shows as a refused entry and the
// functions' retry on their next run can be seen locally too. Without a webhook events are logged.

export interface LocalEventBus {
  readonly url: string;
  close(): Promise<void>;
}

interface PutEventsEntry {
  readonly Source?: string;
  readonly DetailType?: string;
  readonly Detail?: string;
  readonly EventBusName?: string;
  readonly Time?: string;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function serveLocalEventBus(options: {
  readonly webhookUrl: string | undefined;
  readonly log: (line: string) => void;
  readonly region?: string;
}): Promise<LocalEventBus> {
  const deliver = async (entry: PutEventsEntry): Promise<string | undefined> => {
    const id = randomUUID();
    const event = {
      version: '0',
      id,
      'detail-type': entry.DetailType,
      source: entry.Source,
      account: '000000000000',
      time: entry.Time ?? new Date().toISOString(),
      region: options.region ?? 'us-east-1',
      resources: [],
      detail: JSON.parse(entry.Detail ?? '{}') as unknown,
    };
    if (options.webhookUrl === undefined) {
      options.log(`event ${entry.Source} ${entry.DetailType}: ${entry.Detail}`);
      return id;
    }
    try {
      const answer = await fetch(options.webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(event),
        signal: AbortSignal.timeout(5000),
      });
      await answer.arrayBuffer();
      return answer.ok ? id : undefined;
    } catch {
      return undefined;
    }
  };
  const server = createServer(async (request, response) => {
    const type = 'application/x-amz-json-1.1';
    const target = request.headers['x-amz-target'];
    if (request.method !== 'POST' || target !== 'AWSEvents.PutEvents') {
      response.writeHead(400, { 'content-type': type });
      response.end(
        JSON.stringify({ __type: 'UnknownOperationException', message: String(target) }),
      );
      return;
    }
    const { Entries = [] } = JSON.parse((await readBody(request)) || '{}') as {
      Entries?: PutEventsEntry[];
    };
    const ids: Array<string | undefined> = [];
    for (const entry of Entries) ids.push(await deliver(entry));
    response.writeHead(200, { 'content-type': type });
    response.end(
      JSON.stringify({
        FailedEntryCount: ids.filter((id) => id === undefined).length,
        Entries: ids.map((id) =>
          id === undefined
            ? { ErrorCode: 'InternalException', ErrorMessage: 'the webhook did not take it' }
            : { EventId: id },
        ),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
