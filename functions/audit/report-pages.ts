// An audit report's streams by pages (core/shared/pages.ts): the audit-now answer is the first
// page of the report it stored, its `next` the stored report's route with a cursor. A stream with
// every list full is ~35 KB, ~186 KB at the longest names and ten groups
// (test/simulation/answers-by-pages.test.ts): 25 stay under Lambda's 6 MB response.
import type { AuditReport } from '../core/audit/ports.js';
import { InvalidInputError } from '../core/shared/errors.js';
import { isPlainObject } from '../core/shared/input-checks.js';
import { type PageRequest, pageOf } from '../core/shared/pages.js';
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
