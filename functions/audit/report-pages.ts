// An audit report's streams by pages (core/shared/pages.ts): the audit-now answer is the first
// page of the report it stored, its `next` the stored report's route with a cursor. A stream with
// every list full is ~35 KB, ~186 KB at the longest names and ten groups
// (test/simulation/answers-by-pages.test.ts): 25 stay under Lambda's 6 MB response. The HTML view
// pages by the same cursor and limit, and ends a page early by its bytes (htmlReportPage).
import type { AuditReport } from '../core/audit/ports.js';
import { renderAuditHtml } from '../core/audit/render-html.js';
import { LAMBDA_RESPONSE_LIMIT_BYTES } from '../core/rest-proxy/answer-bound.js';
import { InvalidInputError, PayloadTooLargeError } from '../core/shared/errors.js';
import { isPlainObject } from '../core/shared/input-checks.js';
import { encodeCursor, type PageRequest, pageOf } from '../core/shared/pages.js';
import type { PageLimits } from '../platform/http-pages.js';

export const STREAM_PAGES: PageLimits = { defaultLimit: 20, maxLimit: 25 };

/** The report with `request.limit` of its streams from the cursor's, and the next cursor. */
export function reportPage(report: AuditReport, request: PageRequest) {
  const after = request.after;
  if (after !== undefined && (!isPlainObject(after) || !Number.isSafeInteger(after.at)))
    throw new InvalidInputError(
      'cursor: not a cursor of an audit report; pass the `next` of the page before unchanged',
      { field: 'cursor' },
    );
  const page = pageOf(
    report.streams,
    request,
    ({ stream }, at) => ({ stream, at }),
    (_, i, from: { at: number }) => i > from.at,
  );
  return {
    report: { ...report, streams: page.items, streamCount: report.streams.length },
    next: page.next,
  };
}

/**
 * The most bytes an HTML page of a report may take in the function's result: Lambda's response
 * limit (6,291,556 bytes, the body counted as JSON inside the result, where a `"` takes two
 * bytes) less 64 KiB for the status, headers and what the runtime adds.
 */
export const HTML_PAGE_BYTES = LAMBDA_RESPONSE_LIMIT_BYTES - 64 * 1024;

/** Bytes a body takes in the function's result: a JSON string. */
const resultBytes = (body: string) => Buffer.byteLength(JSON.stringify(body));

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
  budget = HTML_PAGE_BYTES,
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
