import { once } from 'node:events';
import {
  createServer,
  request as forward,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';

// A DynamoDB endpoint between Tally and the local DynamoDB API that can lose answers, fail calls
// or stall, chosen per call by operation and table: the faults a network and a busy table cause,
// where pausing the whole process cannot pick one call.

export interface DynamoDbCall {
  /** `UpdateItem`, `PutItem`, … (from X-Amz-Target). */
  readonly operation: string;
  readonly table: string | undefined;
  /** The call's JSON body (DynamoDB's wire format: `{ Key: { auditId: { S: … } } }`, …). */
  readonly input: Record<string, unknown>;
  /** When the proxy received the call, and when it answered it (performance.now(), ms). */
  readonly startedAt: number;
  answeredAt?: number;
  /** Items its answer carried: a Query's or Scan's `Count`, a GetItem's 0 or 1. */
  itemsAnswered?: number | undefined;
}

/**
 * How long an attempt has been waiting before the same call sent again counts as the SDK's retry
 * of it (its request timed out on a loaded machine), not as a second call of the step. Calls Tally
 * sends side by side start within a few milliseconds of each other.
 */
export const SDK_RETRY_AFTER_MS = 250;

/**
 * The round trips the calls took one after another: calls that overlap (one started before
 * another of its step was answered) are one round trip. A call never answered ends its step. The
 * SDK's retry of an attempt that timed out (the same operation and body, sent while that attempt
 * was still unanswered and at least `SDK_RETRY_AFTER_MS` after it) is the same call, not another.
 */
export function roundTrips(calls: readonly DynamoDbCall[]): string[][] {
  const steps: Array<{ calls: DynamoDbCall[]; firstEnd: number }> = [];
  const body = (call: DynamoDbCall) => `${call.operation} ${JSON.stringify(call.input)}`;
  for (const call of [...calls].sort((a, b) => a.startedAt - b.startedAt)) {
    const end = call.answeredAt ?? Number.POSITIVE_INFINITY;
    const retried = steps.find((s) =>
      s.calls.some(
        (earlier) =>
          body(earlier) === body(call) &&
          call.startedAt - earlier.startedAt >= SDK_RETRY_AFTER_MS &&
          (earlier.answeredAt === undefined || earlier.answeredAt > call.startedAt),
      ),
    );
    // The retry's answer is the one the caller waited for: it ends the step.
    if (retried) retried.firstEnd = Math.min(retried.firstEnd, end);
    else {
      const step = steps[steps.length - 1];
      if (step && call.startedAt < step.firstEnd) {
        step.calls.push(call);
        step.firstEnd = Math.min(step.firstEnd, end);
      } else steps.push({ calls: [call], firstEnd: end });
    }
  }
  return steps.map((s) => s.calls.map((c) => c.operation));
}

/**
 * The round trips one piece of work makes through `proxy`, each call named `<operation> <table>`
 * by the env variable naming its table (`TALLY_LEDGER_TABLE` → `ledger`). Every answer is held
 * 25 ms: calls sent side by side overlap, calls in a row cannot. `send` must answer `status`.
 */
export async function tripsOf(
  proxy: DynamoDbProxy,
  tables: Readonly<Record<string, string>>,
  send: () => Promise<{ statusCode: number }>,
  status = 200,
): Promise<string[][]> {
  const name = (call: DynamoDbCall) => {
    const table = Object.entries(tables).find(([, v]) => v === call.table)?.[0] ?? call.table;
    return `${call.operation} ${String(table)
      .replace(/^TALLY_|_TABLE$/g, '')
      .toLowerCase()}`;
  };
  const before = proxy.calls.length;
  proxy.slowAll(25);
  try {
    expect((await send()).statusCode).toBe(status);
  } finally {
    proxy.slowAll(0);
  }
  return roundTrips(proxy.calls.slice(before).map((c) => ({ ...c, operation: name(c) })));
}

/**
 * - `lose-answer`: the call is applied, its answer never comes (the client times out).
 * - `fail`: answered 500 InternalServerError, not applied.
 * - `stall`: accepted, never answered, not applied.
 */
export type DynamoDbFault = 'lose-answer' | 'fail' | 'stall';

export interface DynamoDbProxy {
  readonly endpoint: string;
  /** Every call seen, in order. */
  readonly calls: DynamoDbCall[];
  /** The next `times` calls `match` accepts get `fault`. */
  inject(fault: DynamoDbFault, match: (call: DynamoDbCall) => boolean, times?: number): void;
  /** Every call stalls until `stallAll(false)` (calls already held stay unanswered). */
  stallAll(on: boolean): void;
  /** Every call is applied and answered `ms` late (0: on time): a slow table. */
  slowAll(ms: number): void;
  /** Calls `match` accepts are forwarded only once `until` settles: a barrier between callers. */
  holdUntil(match: (call: DynamoDbCall) => boolean, until: Promise<unknown>): void;
  /** Settles once `count` calls `match` accepts have been answered (counting those already). */
  answered(match: (call: DynamoDbCall) => boolean, count: number): Promise<void>;
  close(): Promise<void>;
}

async function bodyOf(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The items an answer of `operation` carried (undefined: not a read, or not JSON). */
function itemsIn(operation: string, body: Buffer): number | undefined {
  if (!['Query', 'Scan', 'GetItem'].includes(operation)) return undefined;
  try {
    const answer = JSON.parse(body.toString('utf8')) as { Count?: number; Item?: unknown };
    return operation === 'GetItem' ? (answer.Item === undefined ? 0 : 1) : answer.Count;
  } catch {
    return undefined;
  }
}

export async function startDynamoDbProxy(target: string): Promise<DynamoDbProxy> {
  const upstream = new URL(target);
  const rules: Array<{ fault: DynamoDbFault; match: (c: DynamoDbCall) => boolean; left: number }> =
    [];
  const held = new Set<ServerResponse>();
  const calls: DynamoDbCall[] = [];
  const gates: Array<{ match: (c: DynamoDbCall) => boolean; until: Promise<unknown> }> = [];
  const waiters: Array<{ match: (c: DynamoDbCall) => boolean; left: number; done: () => void }> =
    [];
  const onAnswered = (call: DynamoDbCall) => {
    call.answeredAt = performance.now();
    for (const waiter of waiters) {
      if (waiter.left > 0 && waiter.match(call) && --waiter.left === 0) waiter.done();
    }
  };
  let stalled = false;
  let lateMs = 0;

  const server = createServer(async (request, response) => {
    const body = await bodyOf(request);
    const input = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
    const call: DynamoDbCall = {
      operation: String(request.headers['x-amz-target'] ?? '').split('.')[1] ?? '',
      table: typeof input.TableName === 'string' ? input.TableName : undefined,
      input,
      startedAt: performance.now(),
    };
    calls.push(call);
    const rule = rules.find((r) => r.left > 0 && r.match(call));
    if (rule) rule.left--;
    const fault = stalled ? 'stall' : rule?.fault;
    if (fault === 'stall') {
      held.add(response);
      return;
    }
    if (fault === 'fail') {
      onAnswered(call);
      response.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' });
      response.end(JSON.stringify({ __type: 'InternalServerError', message: 'injected fault' }));
      return;
    }
    for (const gate of gates) if (gate.match(call)) await gate.until.catch(() => {});
    const sent = forward({
      host: upstream.hostname,
      port: upstream.port,
      method: request.method,
      path: request.url,
      headers: { ...request.headers, host: upstream.host },
    });
    sent.end(body);
    const [answer] = (await once(sent, 'response')) as [IncomingMessage];
    const answerBody = await bodyOf(answer);
    call.itemsAnswered = itemsIn(call.operation, answerBody);
    if (fault === 'lose-answer') {
      held.add(response);
      return;
    }
    if (lateMs > 0) await new Promise((resolve) => setTimeout(resolve, lateMs));
    onAnswered(call);
    response.writeHead(answer.statusCode ?? 500, answer.headers);
    response.end(answerBody);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    inject(fault, match, times = 1) {
      rules.push({ fault, match, left: times });
    },
    stallAll(on) {
      stalled = on;
    },
    slowAll(ms) {
      lateMs = ms;
    },
    holdUntil(match, until) {
      gates.push({ match, until });
    },
    answered(match, count) {
      const already = calls.filter((c) => c.answeredAt !== undefined && match(c)).length;
      if (already >= count) return Promise.resolve();
      return new Promise((done) => waiters.push({ match, left: count - already, done }));
    },
    async close() {
      for (const response of held) response.socket?.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
