import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createReportStore } from '../../functions/adapters/dynamodb/report-store.js';
import { encodeCursor } from '../../functions/core/shared/pages.js';
import { json } from '../../functions/platform/http.js';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import {
  type Invoke,
  LAMBDA_RESPONSE_LIMIT,
  lambdaLimits,
  payloadBytes,
} from '../../infra/local/payload-limits.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { usePublishEnv } from '../helpers/publish-env.js';

// Burrow's consumer list (GET /v3/kafka/{cluster}/consumer) at 25,000 reported groups of
// 255-character ids, through the real handler with the reconcile reports table on dynalite (the
// index of reported groups written by the report store's own markReported): whole, as Burrow
// answers it, it would be over Lambda's 6,291,556-byte response (as the local stack's Lambda check
// counts a result: infra/local/payload-limits.ts); it answers 413 in Burrow's error shape naming
// the pages, and by `?limit=&cursor=` every group comes once.

const PLAIN = 23_000;
const ESCAPED = 2_000;
/** 255 characters; the escaped ones (quotes and backslashes: ~1 KB each in the result) first. */
const groupIds = [
  ...Array.from(
    { length: ESCAPED },
    (_, i) => `!${String(i).padStart(6, '0')}${'"\\'.repeat(124)}`,
  ),
  ...Array.from({ length: PLAIN }, (_, i) => `${String(i).padStart(6, '0')}-${'g'.repeat(248)}`),
];

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly bytes: number;
}

describe("Burrow's consumer list by pages", () => {
  let invoke: Invoke;
  let documents: DynamoDBDocumentClient;

  /** GET `path` (with `query`) as API Gateway routes it to the Burrow function. */
  const get = async (path: string, query?: Record<string, string>): Promise<Answer> => {
    const event = {
      ...httpEvent({ routeKey: 'GET /v3/kafka/{cluster}/consumer', ...(query && { query }) }),
      rawPath: path,
    };
    const result = (await invoke('reconcileBurrow', event)) as {
      statusCode: number;
      body: string;
    };
    return {
      status: result.statusCode,
      body: JSON.parse(result.body),
      bytes: payloadBytes(result),
    };
  };

  beforeAll(async () => {
    const env = await usePublishEnv({ TALLY_BURROW_CLUSTER_NAME: 'Local-Tally' });
    documents = DynamoDBDocumentClient.from(localDynamoDbClient(inject('dynamodbEndpoint')));
    const reports = createReportStore(documents, env.TALLY_RECONCILE_REPORTS_TABLE as string);
    const at = Date.now();
    for (let i = 0; i < groupIds.length; i += 50) {
      await Promise.all(groupIds.slice(i, i + 50).map((g) => reports.markReported(g, at)));
    }
    const burrow = (await import('../../functions/reconcile/burrow-handler.js')).handler;
    invoke = lambdaLimits(async (_, event) => burrow(event as never, lambdaContext()));
  });
  afterAll(() => documents.destroy());

  it("refuses the whole list of 25,000 groups (over 6 MB) with 413 in Burrow's error shape, naming the limit and the pages", async () => {
    const path = '/v3/kafka/local-tally/consumer';
    // As answered before: the whole list, over Lambda's limit.
    const whole = json(200, {
      error: false,
      message: 'consumer list returned',
      consumers: [...groupIds].sort(),
      request: { url: path, host: 'localhost' },
    });
    expect(payloadBytes(whole)).toBeGreaterThan(LAMBDA_RESPONSE_LIMIT);

    const refused = await get(path);
    expect(refused.status).toBe(413);
    expect(Object.keys(refused.body)).toEqual(['error', 'message', 'request']);
    expect(refused.body).toMatchObject({ error: true, request: { url: path, host: 'localhost' } });
    expect(refused.body.message).toMatch(
      /^the consumer list of 25,000 groups would be [\d,]+ bytes, over Lambda's response limit of 6,291,556 bytes: read it by pages with \?limit=&cursor= /,
    );
  });

  /** Every page from `first`, following each `next` link (less its `limit`, with `dropLimit`). */
  const pages = async (first: Record<string, string>, dropLimit = false) => {
    const answers: Answer[] = [];
    let query = first;
    for (;;) {
      const page = await get('/v3/kafka/local-tally/consumer', query);
      expect(page.status, JSON.stringify(page.body).slice(0, 300)).toBe(200);
      expect(page.body).toMatchObject({ error: false, message: 'consumer list returned' });
      expect(Object.keys(page.body)).toEqual(['error', 'message', 'consumers', 'next', 'request']);
      expect(page.bytes).toBeLessThan(LAMBDA_RESPONSE_LIMIT);
      answers.push(page);
      if (page.body.next === null) return answers;
      const next = new URL(page.body.next as string);
      expect(next.pathname).toBe('/v3/kafka/local-tally/consumer');
      query = Object.fromEntries(next.searchParams);
      if (dropLimit) delete query.limit;
      expect(answers.length).toBeLessThan(20);
    }
  };
  const groupsOf = (answers: Answer[]) => answers.flatMap((a) => a.body.consumers as string[]);

  it('answers every group once by pages of at most 20,000 under 6 MB, ending a page early by its bytes', async () => {
    const answers = await pages({ limit: '20000' });
    expect(groupsOf(answers)).toEqual([...groupIds].sort());
    // The escaped ids (~1 KB each in the result) end the first page before 20,000 ids.
    const counts = answers.map((a) => (a.body.consumers as string[]).length);
    expect(counts[0]).toBeLessThan(20_000);
    expect(counts.length).toBe(2);
    expect(answers[0]?.bytes).toBeGreaterThan(5_500_000);
  });

  it('pages by the default 10,000 for a cursor without a limit', async () => {
    const answers = await pages({ limit: '10000' }, true);
    expect(groupsOf(answers)).toEqual([...groupIds].sort());
    expect(answers.map((a) => (a.body.consumers as string[]).length)).toEqual([
      10_000, 10_000, 5_000,
    ]);
  });

  it("answers a bad limit or cursor 400 in Burrow's error shape, naming it", async () => {
    const path = '/v3/kafka/local-tally/consumer';
    for (const [query, field] of [
      [{ limit: '0' }, 'limit'],
      [{ limit: '20001' }, 'limit'],
      [{ limit: 'ten' }, 'limit'],
      [{ limit: '' }, 'limit'],
      [{ cursor: 'not a cursor!' }, 'cursor'],
      [{ cursor: encodeCursor({ stream: 's', at: 3 }) }, 'cursor'],
    ] as const) {
      const answer = await get(path, query);
      expect(answer.status, JSON.stringify(query)).toBe(400);
      expect(Object.keys(answer.body)).toEqual(['error', 'message', 'request']);
      expect(answer.body.error).toBe(true);
      expect(answer.body.message, JSON.stringify(query)).toMatch(new RegExp(`^${field}: `));
    }
    // A cursor past the last group: an empty last page.
    const past = await get(path, { cursor: encodeCursor('~') });
    expect(past).toMatchObject({ status: 200, body: { consumers: [], next: null } });
  });
});
