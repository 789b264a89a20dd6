import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAuditStore } from '../../functions/adapters/dynamodb/audit-store.js';
import type { LinkedFindings } from '../../functions/core/audit/ports.js';
import { renderAuditHtml } from '../../functions/core/audit/render-html.js';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import {
  type Invoke,
  LAMBDA_RESPONSE_LIMIT,
  lambdaLimits,
  payloadBytes,
} from '../../infra/local/payload-limits.js';
import { auditReportOf, fullFindings } from '../helpers/audit-findings.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { uniqueName } from '../helpers/unique-name.js';

// The HTML view of a stored audit report (GET …/audits/{audit_id}?format=html) by pages: a
// report whose whole page crosses Lambda's 6 MB response (6,291,556 bytes, as the local stack's
// Lambda check counts a result: infra/local/payload-limits.ts), stored on dynalite and read
// through the real handler, page after page by its "next page" links.

const thousands = (n: number) => n.toLocaleString('en-US');
const group = (g: number) => `${g}-${'g'.repeat(250)}`;
const html = (text: string) =>
  text.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) =>
    e === 'amp' ? '&' : e === 'lt' ? '<' : e === 'gt' ? '>' : e === 'quot' ? '"' : "'",
  );

/** A stream with one bucket, one group and no findings: ~7 KB of HTML at 249 characters. */
function lightStream(s: number): LinkedFindings {
  return {
    stream: `${String(s).padStart(5, '0')}-${'s'.repeat(243)}`,
    produced: 10,
    inLog: 10,
    processed: { [group(0)]: 10 },
    producerDuplicates: [],
    consumerDuplicates: [],
    lost: [],
    pending: [],
    unknownLanded: [],
    unknownAbsent: [],
    buckets: [
      {
        start: '2026-11-30T12:00:00.000Z',
        produced: 10,
        inLog: 10,
        notInLedger: 0,
        duplicatesInLog: 0,
        lost: 0,
        unknownAbsent: 0,
        processed: { [group(0)]: 10 },
        pending: {},
        redelivered: {},
      },
    ],
  } as unknown as LinkedFindings;
}

/** Every list full at the longest names, ten groups, 25 buckets: ~360 KB of HTML. */
const fullStream = (s: number) => fullFindings(lightStream(s).stream, group);

describe('the HTML view of a stored audit report by pages', () => {
  let documents: DynamoDBDocumentClient;
  let env: Record<string, string>;
  let invoke: Invoke;

  beforeAll(async () => {
    env = await usePublishEnv();
    documents = DynamoDBDocumentClient.from(localDynamoDbClient(inject('dynamodbEndpoint')));
    const read = (await import('../../functions/audit/read-handler.js')).handler;
    // Lambda's response check of the local stack: a result over 6,291,556 bytes throws
    // Function.ResponseSizeTooLarge (API Gateway's 500).
    invoke = lambdaLimits(async (_, event) => read(event as never, lambdaContext()));
  });
  afterAll(() => documents.destroy());

  const get = async (auditId: string, query: Record<string, string>) => {
    const event = httpEvent({
      routeKey: 'GET /v3/clusters/{cluster_id}/audits/{audit_id}',
      pathParameters: { cluster_id: inject('kafkaClusterId'), audit_id: auditId },
      query,
    });
    const result = (await invoke('auditRead', event)) as {
      statusCode: number;
      headers: Record<string, string>;
      body: string;
    };
    return { ...result, bytes: payloadBytes(result) };
  };

  it('answers 1,018 streams of 249-character names (the whole page 28.7 MB) in pages under 6 MB, every stream once, by the next-page links', async () => {
    // 1,000 light streams and, among them, 18 with every list full: a page of 20 from there
    // would be ~6.5 MB, so the page ends early by its bytes.
    const streams = Array.from({ length: 1_018 }, (_, s) =>
      s >= 500 && s < 518 ? fullStream(s) : lightStream(s),
    );
    const report = auditReportOf('t'.repeat(249), streams, {
      scanned: 9_000,
      scannedTotal: 9_000,
      checkpoint: [{ partition: 0, next: 9_000 }],
    });
    const auditId = uniqueName('audit-html-pages');
    await createAuditStore(documents, env.TALLY_AUDITS_TABLE as string).save(auditId, report);

    // As answered before: the whole report in one page, over Lambda's limit.
    const whole = {
      statusCode: 200,
      headers: { 'content-type': 'text/html; charset=utf-8' },
      body: renderAuditHtml(report),
    };
    expect(payloadBytes(whole)).toBeGreaterThan(2 * LAMBDA_RESPONSE_LIMIT);

    const seen: string[] = [];
    const sizes: number[] = [];
    let query: Record<string, string> | undefined = { format: 'html' };
    while (query !== undefined) {
      const page = await get(auditId, query);
      expect(page.statusCode, page.body.slice(0, 300)).toBe(200);
      expect(page.headers['content-type']).toContain('text/html');
      expect(page.bytes).toBeLessThan(LAMBDA_RESPONSE_LIMIT);
      sizes.push(page.bytes);
      const names = [...page.body.matchAll(/<h2>Stream ([^<]+)<\/h2>/g)].map((m) =>
        html(m[1] as string),
      );
      expect(names.length).toBeGreaterThan(0);
      expect(names.length).toBeLessThanOrEqual(20);
      const [from, to] = [seen.length + 1, seen.length + names.length].map(thousands);
      const span = `streams ${from === to ? from : `${from}–${to}`} of 1,018`;
      expect(page.body.includes(span), span).toBe(true);
      seen.push(...names);
      const next = /<a class="next" rel="next" href="([^"]+)">next page<\/a>/.exec(page.body);
      if (next === null) query = undefined;
      else {
        const url = new URL(html(next[1] as string));
        expect(url.pathname).toBe(
          `/v3/clusters/${inject('kafkaClusterId')}/audits/${encodeURIComponent(auditId)}`,
        );
        query = Object.fromEntries(url.searchParams);
        expect(query).toMatchObject({ format: 'html', limit: '20' });
      }
      expect(sizes.length).toBeLessThan(100);
    }
    // Every stream on exactly one page, in the report's order.
    expect(seen).toEqual(streams.map((s) => s.stream));
    // The full streams' pages end early by their bytes (16 of them at most fit a page).
    expect(sizes.length).toBeGreaterThan(Math.ceil(1_018 / 20));
    // … and are filled to most of it (a page drops streams in proportion to its excess).
    expect(Math.max(...sizes)).toBeGreaterThan(4_000_000);
  });

  it('answers the JSON view of 30 streams with every list full (451 KB each, 13.5 MB in all) in pages under 6 MB that end by their bytes, every stream once', async () => {
    const streams = Array.from({ length: 30 }, (_, s) => fullStream(s));
    const auditId = uniqueName('audit-json-pages');
    await createAuditStore(documents, env.TALLY_AUDITS_TABLE as string).save(
      auditId,
      auditReportOf('t'.repeat(249), streams),
    );
    const seen: string[] = [];
    let query: Record<string, string> | undefined = { limit: '25' };
    while (query !== undefined) {
      // Before, 25 such streams were one 11 MB answer: Function.ResponseSizeTooLarge.
      const page = await get(auditId, query);
      expect(page.statusCode, page.body.slice(0, 300)).toBe(200);
      expect(page.bytes).toBeLessThan(LAMBDA_RESPONSE_LIMIT);
      const body = JSON.parse(page.body) as {
        streams: Array<{ stream: string }>;
        next: string | null;
      };
      expect(body.streams.length).toBeGreaterThan(0);
      expect(body.streams.length).toBeLessThan(25);
      seen.push(...body.streams.map((s) => s.stream));
      query = body.next === null ? undefined : Object.fromEntries(new URL(body.next).searchParams);
      expect(seen.length).toBeLessThanOrEqual(30);
    }
    expect(seen).toEqual(streams.map((s) => s.stream));
  });

  it("resumes the JSON route's pages: its `next` cursor opens the same streams as HTML", async () => {
    const streams = Array.from({ length: 30 }, (_, s) => lightStream(s));
    const report = auditReportOf('small', streams);
    const auditId = uniqueName('audit-html-cursor');
    await createAuditStore(documents, env.TALLY_AUDITS_TABLE as string).save(auditId, report);
    const json = await get(auditId, { limit: '7' });
    const { next } = JSON.parse(json.body) as { next: string };
    const cursor = new URL(next).searchParams.get('cursor') as string;
    const page = await get(auditId, { format: 'html', limit: '7', cursor });
    const names = [...page.body.matchAll(/<h2>Stream ([^<]+)<\/h2>/g)].map((m) => m[1]);
    expect(names).toEqual(streams.slice(7, 14).map((s) => s.stream));
    expect(page.body).toContain('streams 8–14 of 30');
    expect(page.body).toMatch(/<a class="first" href="[^"]*format=html&amp;limit=7">first page/);
    // A bad limit or cursor is 400 naming it, as on the JSON route.
    const bad = await get(auditId, { format: 'html', limit: '26' });
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({ field: 'limit' });
    const badCursor = await get(auditId, { format: 'html', cursor: 'eyJ4IjoxfQ' });
    expect(badCursor.statusCode).toBe(400);
    expect(JSON.parse(badCursor.body)).toMatchObject({ field: 'cursor' });
  });
});
