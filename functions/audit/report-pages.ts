// An audit report's streams by pages (core/shared/pages.ts): the audit-now answer is the first
// page of the report it stored, its `next` the stored report's route with a cursor. A page holds
// `limit` streams (default 20, at most 25) and ends earlier by its bytes: a stream with every list
// full is ~35 KB, ~450 KB at the longest names with ten groups in every bucket row
// (test/simulation/answers-by-pages.test.ts), so 25 of those would be 11 MB. The HTML view pages
// by the same cursor and limit, and ends a page early by its own bytes (htmlReportPage).
import type { AuditReport } from '../core/audit/ports.js';
import { renderAuditHtml } from '../core/audit/render-html.js';
import { LAMBDA_RESPONSE_LIMIT_BYTES } from '../core/rest-proxy/answer-bound.js';
import { InvalidInputError, PayloadTooLargeError } from '../core/shared/errors.js';
import { isPlainObject } from '../core/shared/input-checks.js';
import { encodeCursor, type PageRequest } from '../core/shared/pages.js';
import type { PageLimits } from '../platform/http-pages.js';

export const STREAM_PAGES: PageLimits = { defaultLimit: 20, maxLimit: 25 };

/**
 * The most bytes a page of a report may take in the function's result: Lambda's response limit
 * (6,291,556 bytes, the body counted as JSON inside the result, where a `"` takes two bytes) less
 * 64 KiB for the status, headers and what the runtime adds.
 */
export const PAGE_BYTES = LAMBDA_RESPONSE_LIMIT_BYTES - 64 * 1024;

/** Bytes a body takes in the function's result: a JSON string. */
const resultBytes = (body: string) => Buffer.byteLength(JSON.stringify(body));

/**
 * The report with `request.limit` of its streams from the cursor's, and the next cursor. A page
 * ends earlier where the next stream would take its JSON past `budget` bytes in the result: a
 * stream's findings grow with its groups (~450 KB with every list full, 250-character names and
 * ten groups in every bucket row), so `limit` alone does not bound the answer. A stream whose
 * page alone is over the budget is refused (413) naming it.
 */
export function reportPage(report: AuditReport, request: PageRequest, budget = PAGE_BYTES) {
  const after = request.after;
  if (after !== undefined && (!isPlainObject(after) || !Number.isSafeInteger(after.at)))
    throw new InvalidInputError(
      'cursor: not a cursor of an audit report; pass the `next` of the page before unchanged',
      { field: 'cursor' },
    );
  const total = report.streams.length;
  const first = Math.min(after === undefined ? 0 : (after.at as number) + 1, total);
  // The page without streams, and room for what the route adds (its id, the next link).
  let bytes = resultBytes(JSON.stringify({ ...report, streams: [], streamCount: total })) + 4096;
  const streams: AuditReport['streams'][number][] = [];
  for (let i = first; i < total && streams.length < request.limit; i++) {
    const stream = report.streams[i] as AuditReport['streams'][number];
    const more = resultBytes(JSON.stringify(stream)) + 2;
    if (bytes + more > budget) {
      if (streams.length > 0) break;
      throw new PayloadTooLargeError(
        `stream ${stream.stream}: its findings alone are ${bytes + more} bytes in an answer, over Lambda's response limit of ${LAMBDA_RESPONSE_LIMIT_BYTES} bytes; they grow with the groups audited: audit the topic with fewer \`groups\``,
      );
    }
    bytes += more;
    streams.push(stream);
  }
  const end = first + streams.length;
  const last = streams[streams.length - 1];
  return {
    report: { ...report, streams, streamCount: total },
    next:
      end < total && last !== undefined
        ? encodeCursor({ stream: last.stream, at: end - 1 })
        : undefined,
  };
}

/**
 * The report's HTML page of at most `request.limit` streams from the cursor's, ending earlier
 * where the next stream would take the page past `budget` bytes (a stream's HTML grows with its
 * groups: ~360 KB with every list full, 250-character names and ten groups; ~7 KB with one bucket
 * and no findings): the cursor is the JSON route's, so either view resumes the other's pages.
 * `link(cursor)` is the URL of a page (undefined: the first). A single stream whose page alone is
 * over the budget is refused (413) naming it and the JSON route, which answers it.
 */
export function htmlReportPage(
  report: AuditReport,
  request: PageRequest,
  link: (cursor: string | undefined) => string,
  budget = PAGE_BYTES,
): string {
  const { report: shown } = reportPage(report, request);
  const total = report.streams.length;
  const after = request.after as { at: number } | undefined;
  const first = Math.min(after === undefined ? 0 : after.at + 1, total);
  let count = shown.streams.length;
  for (;;) {
    const streams = shown.streams.slice(0, count);
    const end = first + count;
    const last = streams[count - 1];
    const next =
      end < total && last !== undefined
        ? link(encodeCursor({ stream: last.stream, at: end - 1 }))
        : undefined;
    const body = renderAuditHtml(
      { ...report, streams },
      { first, total, next, firstPage: link(undefined) },
    );
    const bytes = resultBytes(body);
    if (bytes <= budget) return body;
    if (count === 1)
      throw new PayloadTooLargeError(
        `stream ${last?.stream}: its HTML page alone is ${bytes} bytes, over Lambda's response limit of ${LAMBDA_RESPONSE_LIMIT_BYTES} bytes; read it as JSON (this route without format=html and Accept: text/html)`,
      );
    // Fewer streams, in proportion (each has its own size), at least one fewer.
    count = Math.max(1, Math.min(count - 1, Math.floor((count * budget) / bytes)));
  }
}
