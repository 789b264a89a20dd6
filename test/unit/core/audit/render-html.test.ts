import { describe, expect, it } from 'vitest';
import type { AuditReport, LinkedFindings } from '../../../../functions/core/audit/ports.js';
import { escapeHtml, renderAuditHtml } from '../../../../functions/core/audit/render-html.js';
import type { BucketRow } from '../../../../functions/core/audit/stream-audit.js';
import { bucketRow, noFindings } from '../../../helpers/audit-findings.js';

const empty = (stream: string): LinkedFindings => ({ ...noFindings(stream), buckets: [] });

const report = (streams: LinkedFindings[]): AuditReport => ({
  topic: 'orders.v1',
  at: '2024-05-01T12:00:00.000Z',
  complete: true,
  scanned: 1234,
  scannedTotal: 5678,
  untracked: 2,
  unread: 0,
  checkpoint: [{ partition: 0, next: 5680 }],
  topicBuckets: [],
  streams,
  settled: { landed: 1, notWritten: 3 },
});

const busy: LinkedFindings = {
  stream: 'orders',
  produced: 100,
  inLog: 80,
  processed: { billing: 40 },
  producerDuplicates: [
    {
      seq: 17,
      times: 2,
      copies: [
        { partition: 0, offset: 16, session: 'sess-a' },
        { partition: 2, offset: 901, session: 'sess-b' },
      ],
    },
  ],
  consumerDuplicates: [{ group: 'billing', from: 5, to: 9, times: 3, reconcileEvents: [] }],
  lost: [{ from: 81, to: 90, acked: { partition: 0, offset: 80 } }],
  pending: [{ group: 'billing', from: 41, to: 80 }],
  unknownLanded: [{ seq: 33, partition: 1, offset: 4242 }],
  unknownAbsent: [[95, 100]],
  buckets: [
    bucketRow(
      '2024-05-01T11:55:00.000Z',
      { produced: 60, inLog: 50, duplicatesInLog: 1, lost: 10 },
      'billing',
      { processed: 40, pending: 10, redelivered: 10 },
    ),
    bucketRow(
      '2024-05-01T12:00:00.000Z',
      { produced: 40, inLog: 30, unknownAbsent: 6 },
      'billing',
      { processed: 0, pending: 30, redelivered: 0 },
    ),
  ],
};

/** The attributes of every `<rect>` inside the chart. */
function bars(page: string, id = 'layers-chart'): Array<Record<string, string>> {
  const svg = new RegExp(`<svg id="${id}"[\\s\\S]*?</svg>`).exec(page)?.[0] ?? '';
  return [...svg.matchAll(/<rect ([^>]*)>/g)].map((m) =>
    Object.fromEntries([...(m[1] ?? '').matchAll(/([\w-]+)="([^"]*)"/g)].map((a) => [a[1], a[2]])),
  );
}

/** The text of the section whose heading starts with `title`. */
function section(page: string, title: string): string {
  const start = page.indexOf(`<h3>${title} `);
  expect(start).toBeGreaterThanOrEqual(0);
  return page.slice(start, page.indexOf('</section>', start));
}

describe('escapeHtml', () => {
  it('escapes markup and both quotes', () => {
    expect(escapeHtml(`<script>alert("x")</script>`)).toBe(
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;',
    );
    expect(escapeHtml(`a'b & c`)).toBe('a&#39;b &amp; c');
  });
});

describe('renderAuditHtml', () => {
  it('is a complete document with the topic and time', () => {
    const page = renderAuditHtml(report([busy]));
    expect(page.startsWith('<!doctype html>')).toBe(true);
    expect(page.trimEnd().endsWith('</html>')).toBe(true);
    expect(page).toContain('<title>Audit of orders.v1 at 2024-05-01T12:00:00.000Z</title>');
    expect(page).toContain('1,234 records read by this run, 5,678 by all runs');
    expect(page).toContain('log read to its end');
  });

  it('loads nothing from outside', () => {
    const page = renderAuditHtml(report([busy]));
    expect(page).not.toMatch(/<script|<link|<img|src=|url\(|@import/i);
  });

  it('shows summary tiles per stream', () => {
    const page = renderAuditHtml(report([busy]));
    const tile = (label: string) =>
      new RegExp(`<div class="tile-label">${label}</div><div class="tile-value">([^<]*)<`).exec(
        page,
      )?.[1];
    expect(tile('produced')).toBe('100');
    expect(tile('in log')).toBe('80');
    expect(tile('processed · billing')).toBe('40');
    expect(tile('lost')).toBe('10');
    // Extra copies, as the tables count them: seq 17 twice in the log is one extra copy; seqs
    // 5–9 delivered 3 times are 10 extra deliveries, billing's redelivered tile.
    expect(tile('duplicates')).toBe('11');
    expect(page).toContain('extra copies: producer 1 · consumer 10');
    expect(tile('redelivered · billing')).toBe('10');
    expect(tile('pending')).toBe('40');
    expect(tile('UNKNOWN settled')).toBe('7');
    expect(page).toContain('landed 1 · absent 6');
  });

  it('draws one bar per stream and layer, heights proportional to the values', () => {
    const other = { ...empty('refunds'), produced: 50, inLog: 50, processed: { audit: 25 } };
    const rects = bars(renderAuditHtml(report([busy, other])));
    // Groups are the union across streams: produced, in log, billing, audit — per stream.
    expect(
      rects.map((r) => `${r['data-category']}/${r['data-series']}=${r['data-value']}`),
    ).toEqual([
      'orders/produced=100',
      'orders/in log=80',
      'orders/processed by billing=40',
      'orders/processed by audit=0',
      'refunds/produced=50',
      'refunds/in log=50',
      'refunds/processed by billing=0',
      'refunds/processed by audit=25',
    ]);
    const heights = rects.map((r) => Number(r.height));
    const values = rects.map((r) => Number(r['data-value']));
    const scale = (heights[0] ?? 0) / 100;
    expect(scale).toBeGreaterThan(0);
    heights.forEach((h, i) => {
      expect(h).toBeCloseTo((values[i] ?? 0) * scale, 1);
    });
    // Bars stand on the same baseline.
    const bases = new Set(rects.map((r) => Number(r.y) + Number(r.height)));
    expect(bases.size).toBe(1);
  });

  it('draws each stream per time bucket and tabulates every bucket', () => {
    const page = renderAuditHtml(report([busy]));
    expect(
      bars(page, 'buckets-chart-0').map(
        (r) => `${r['data-category']}/${r['data-series']}=${r['data-value']}`,
      ),
    ).toEqual([
      '05-01 11:55/produced=60',
      '05-01 11:55/in log=50',
      '05-01 11:55/processed by billing=40',
      '05-01 12:00/produced=40',
      '05-01 12:00/in log=30',
      '05-01 12:00/processed by billing=0',
    ]);
    expect(section(page, 'Per time bucket')).toContain(
      '<tr><td>2024-05-01 12:00</td><td>40</td><td>30</td><td>0</td><td>0</td><td>0</td><td>6</td><td>0</td><td>30</td><td>0</td><td>0</td><td>0</td></tr>',
    );
    // The once guard's columns and, per group, redelivered beside suppressed and acted twice.
    expect(section(page, 'Per time bucket')).toContain('<th>suppressed · billing</th>');
    expect(section(page, 'Per time bucket')).toContain('<th>acted twice · billing</th>');
    expect(page).toMatch(
      /redelivered · billing<\/div><div class="tile-value">\d+<\/div><div class="tile-note">suppressed 0 · acted twice \d+/,
    );
  });

  it('labels the row that sums every older bucket as older, with its span', () => {
    const [first, second] = busy.buckets;
    const folded = {
      ...busy,
      buckets: [
        {
          ...(first as BucketRow),
          start: '2024-04-20T00:00:00.000Z',
          until: '2024-05-01T12:00:00.000Z',
        },
        second as BucketRow,
      ],
    };
    const page = renderAuditHtml(report([folded]));
    expect(bars(page, 'buckets-chart-0')[0]?.['data-category']).toBe('older');
    expect(section(page, 'Per time bucket')).toContain(
      '<tr><td>older: 2024-04-20 00:00 – 2024-05-01 12:00</td><td>60</td>',
    );
  });

  it('says when the log was not read to its end', () => {
    const page = renderAuditHtml({ ...report([busy]), complete: false });
    expect(page).toContain('log NOT read to its end');
  });

  it('labels the axes and has a legend', () => {
    const page = renderAuditHtml(report([busy]));
    const svg = /<svg id="layers-chart"[\s\S]*?<\/svg>/.exec(page)?.[0] ?? '';
    expect(svg).toContain('>records</text>');
    expect(svg).toContain('>orders</text>');
    expect(svg).toContain('>100</text>');
    // The legend is HTML after the chart: a long name wraps, it is never cut by the SVG's edge.
    const legend = /<ul class="legend" data-chart="layers-chart">[\s\S]*?<\/ul>/.exec(page)?.[0];
    for (const name of ['produced', 'in log', 'processed by billing'])
      expect(legend).toMatch(
        new RegExp(`<li><span class="swatch" style="background:#\\w+"></span>${name}</li>`),
      );
  });

  it('draws zero-height bars when nothing was produced', () => {
    const rects = bars(renderAuditHtml(report([empty('orders.v1')])));
    expect(rects.map((r) => r.height)).toEqual(['0', '0']);
  });

  it('lists the findings with their layer', () => {
    const page = renderAuditHtml(report([busy]));
    expect(section(page, 'Producer-side duplicates')).toContain('<span class="layer">producer');
    expect(section(page, 'Producer-side duplicates')).toContain(
      '<td>17</td><td><ul><li>p0 @ 16 · sess-a</li><li>p2 @ 901 · sess-b</li></ul></td><td>1</td>',
    );
    expect(section(page, 'Consumer-side duplicates')).toContain(
      '<tr><td>billing</td><td>5–9</td><td>3</td><td>10</td></tr>',
    );
    // A report stored before ackedEach names the first seq's place, as the first seq's.
    expect(section(page, 'Lost')).toContain(
      '<tr><td>81–90</td><td><ul><li>81: p0 @ 80</li><li>9 more not shown</li></ul></td></tr>',
    );
    expect(section(page, 'Pending')).toContain('<tr><td>billing</td><td>41–80</td></tr>');
    expect(section(page, 'UNKNOWN landed')).toContain(
      '<tr><td>33</td><td>1</td><td>4242</td></tr>',
    );
    expect(section(page, 'UNKNOWN absent')).toContain('<tr><td>95–100</td></tr>');
    expect(page).not.toContain('>none<');
  });

  it('names the offset of each lost seq, not one offset for a range', () => {
    const lost = {
      from: 11,
      to: 12,
      acked: { partition: 0, offset: 5 },
      ackedEach: [
        { seq: 11, partition: 0, offset: 5 },
        { seq: 12, partition: 0, offset: 6 },
      ],
    };
    const page = renderAuditHtml(report([{ ...busy, lost: [lost] }]));
    expect(section(page, 'Lost')).toContain(
      '<tr><td>11–12</td><td><ul><li>11: p0 @ 5</li><li>12: p0 @ 6</li></ul></td></tr>',
    );
  });

  it('draws a chart of one cluster across its card, wider than its bars need', () => {
    const svg = /<svg id="layers-chart"[^>]*>/.exec(renderAuditHtml(report([busy])))?.[0] ?? '';
    expect(svg).toContain('width="100%"');
    expect(Number(/viewBox="0 0 (\d+)/.exec(svg)?.[1])).toBeGreaterThanOrEqual(960);
  });

  it('says none for empty sections', () => {
    const page = renderAuditHtml(report([empty('orders.v1')]));
    for (const title of [
      'Producer-side duplicates',
      'Consumer-side duplicates',
      'Lost',
      'Pending',
      'UNKNOWN landed',
      'UNKNOWN absent',
    ])
      expect(section(page, title)).toMatch(/<td class="none" colspan="\d">none<\/td>/);
  });

  it('escapes names that come from users', () => {
    const evil = `"><script>alert('x')</script>`;
    const page = renderAuditHtml({
      ...report([
        {
          ...busy,
          stream: evil,
          processed: { [evil]: 1 },
          pending: [{ group: evil, from: 1, to: 2 }],
          producerDuplicates: [
            { seq: 1, times: 2, copies: [{ partition: 0, offset: 0, session: evil }] },
          ],
        },
      ]),
      topic: `<img src=x onerror=alert(1)>`,
    });
    expect(page).not.toContain('<script');
    expect(page).not.toContain('<img');
    expect(page).toContain('data-category="&quot;&gt;&lt;script&gt;');
    expect(page.match(/<script/gi) ?? []).toEqual([]);
    expect(page).toContain('&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });
});
