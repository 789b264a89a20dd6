import { describe, expect, it } from 'vitest';
import { htmlReportPage } from '../../../functions/audit/report-pages.js';
import type { LinkedFindings } from '../../../functions/core/audit/ports.js';
import { PayloadTooLargeError } from '../../../functions/core/shared/errors.js';
import { decodeCursor } from '../../../functions/core/shared/pages.js';
import { auditReportOf } from '../../helpers/audit-findings.js';

// htmlReportPage's early end by bytes, at a small budget: a page holds the streams that fit it,
// its next link resumes after the last shown, and one stream alone over it is refused (413).

const stream = (s: number, groups: number): LinkedFindings =>
  ({
    stream: `stream-${s}`,
    produced: 1,
    inLog: 1,
    processed: Object.fromEntries(Array.from({ length: groups }, (_, g) => [`group-${g}`, 1])),
    producerDuplicates: [],
    consumerDuplicates: [],
    lost: [],
    pending: [],
    unknownLanded: [],
    unknownAbsent: [],
    buckets: [],
  }) as unknown as LinkedFindings;

const reportOf = (streams: LinkedFindings[]) => auditReportOf('t', streams);

const shown = (body: string) => [...body.matchAll(/<h2>Stream ([^<]+)<\/h2>/g)].map((m) => m[1]);
const link = (cursor: string | undefined) => `/a?cursor=${cursor ?? ''}`;
const bytes = (body: string) => Buffer.byteLength(JSON.stringify(body));

describe('htmlReportPage', () => {
  it('ends a page before its budget and resumes after its last stream', () => {
    const report = reportOf(Array.from({ length: 12 }, (_, s) => stream(s, s % 3 === 0 ? 40 : 1)));
    const budget = 60_000;
    const seen: string[] = [];
    let after: unknown;
    let pages = 0;
    for (; pages < 20; pages++) {
      const body = htmlReportPage(report, { after, limit: 10 }, link, budget);
      expect(bytes(body)).toBeLessThanOrEqual(budget);
      const names = shown(body);
      expect(names.length).toBeGreaterThan(0);
      seen.push(...(names as string[]));
      const next = /rel="next" href="\/a\?cursor=([^"]+)"/.exec(body)?.[1];
      if (next === undefined) break;
      expect(decodeCursor(next)).toEqual({ stream: names.at(-1), at: seen.length - 1 });
      after = decodeCursor(next);
    }
    expect(seen).toEqual(report.streams.map((s) => s.stream));
    // Without the budget, 10 and 2: the budget ended pages earlier.
    expect(pages + 1).toBeGreaterThan(2);
    // The whole report would not fit one page of this budget.
    expect(
      bytes(htmlReportPage(report, { after: undefined, limit: 12 }, link, 1e9)),
    ).toBeGreaterThan(budget);
  });

  it('refuses a stream whose page alone is over the budget, naming it and the JSON route', () => {
    const report = reportOf([stream(0, 1), stream(1, 200)]);
    expect(() =>
      htmlReportPage(report, { after: { stream: 'stream-0', at: 0 }, limit: 10 }, link, 60_000),
    ).toThrow(PayloadTooLargeError);
    expect(() =>
      htmlReportPage(report, { after: { stream: 'stream-0', at: 0 }, limit: 10 }, link, 60_000),
    ).toThrow(/stream stream-1: its HTML page alone is \d+ bytes.*read it as JSON/);
    // The stream before it still has its page, whose next link leads to the refusal.
    expect(shown(htmlReportPage(report, { after: undefined, limit: 10 }, link, 60_000))).toEqual([
      'stream-0',
    ]);
  });
});
