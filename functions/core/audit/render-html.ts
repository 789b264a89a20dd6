import type { AuditReport, LinkedFindings } from './ports.js';
import type { AuditFindings } from './stream-audit.js';

// An audit report as one self-contained HTML page: no scripts, fonts, images or other requests
// (a CSP forbids them), so it can be attached to a ticket and opened offline. Every interpolated
// value goes through `html`, which escapes it unless it is markup this module built itself.

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for use in HTML content and in quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** Markup built by this module: interpolated as is. */
class Markup {
  constructor(readonly value: string) {}
}

type Value = Markup | string | number | readonly Value[];

function interpolate(value: Value): string {
  if (value instanceof Markup) return value.value;
  if (Array.isArray(value)) return value.map(interpolate).join('');
  return escapeHtml(String(value));
}

/** A template whose interpolations are escaped, except markup built by `html` itself. */
function html(strings: TemplateStringsArray, ...values: readonly Value[]): Markup {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += interpolate(value) + (strings[i + 1] ?? '');
  });
  return new Markup(out);
}

const num = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const range = (from: number, to: number): string => (from === to ? `${from}` : `${from}–${to}`);
const seqsIn = (ranges: ReadonlyArray<{ from: number; to: number }>): number =>
  ranges.reduce((sum, r) => sum + r.to - r.from + 1, 0);

/** Groups in the order first met across streams. */
function groupsOf(report: AuditReport): string[] {
  const groups = new Set<string>();
  for (const s of report.streams) for (const g of Object.keys(s.processed)) groups.add(g);
  return [...groups];
}

const PALETTE = ['#4c78a8', '#72b7b2', '#f58518', '#e45756', '#54a24b', '#b279a2', '#9d755d'];
const colour = (i: number): string => PALETTE[i % PALETTE.length] ?? '#888';

/** One cluster of bars: a stream, or a time bucket of one stream. */
interface Category {
  readonly label: string;
  /** One value per series, in series order. */
  readonly values: readonly number[];
}

/** The bars of every cluster: produced, in log, then processed per group. */
const layerSeries = (groups: readonly string[]): string[] => [
  'produced',
  'in log',
  ...groups.map((g) => `processed by ${g}`),
];

interface ChartSpec {
  readonly id: string;
  readonly label: string;
  readonly xTitle: string;
  readonly series: readonly string[];
  readonly categories: readonly Category[];
}

/** Per stream: produced, in log, then processed per group. */
function streamChart(report: AuditReport): ChartSpec {
  const groups = groupsOf(report);
  return {
    id: 'layers-chart',
    label: 'Records per layer and stream',
    xTitle: 'stream',
    series: layerSeries(groups),
    categories: report.streams.map((s) => ({
      label: s.stream,
      values: [s.produced, s.inLog, ...groups.map((g) => s.processed[g] ?? 0)],
    })),
  };
}

/** A bucket's start; for the row that sums every older bucket (folded or unlisted), its span. */
function bucketLabel(b: { readonly start: string; readonly until?: string }): string {
  const at = (iso: string) => iso.slice(0, 16).replace('T', ' ');
  return b.until === undefined ? at(b.start) : `older: ${at(b.start)} – ${at(b.until)}`;
}

/** One stream per time bucket: produced, in log, then processed per group. */
function bucketChart(s: LinkedFindings, index: number): ChartSpec {
  const groups = Object.keys(s.processed);
  return {
    id: `buckets-chart-${index}`,
    label: `Records per layer and time bucket of stream ${s.stream}`,
    xTitle: 'time bucket (UTC)',
    series: layerSeries(groups),
    categories: s.buckets.map((b) => ({
      label: b.until === undefined ? b.start.slice(5, 16).replace('T', ' ') : 'older',
      values: [b.produced, b.inLog, ...groups.map((g) => b.processed[g] ?? 0)],
    })),
  };
}

const PLOT_HEIGHT = 200;
const BAR = 18;
const BAR_GAP = 4;
const GROUP_GAP = 32;
const LEFT = 64;
const RIGHT = 16;
const TOP = 16;
/**
 * The narrowest drawing: a chart of one or two clusters is spread over this width, so it fills
 * its card (the SVG is drawn at the card's width, `width: 100%`), not 174 px of a 1,200 px card.
 */
const MIN_WIDTH = 960;
/** Text of the axis and category labels: 12 px system-ui averages under 7 px a character. */
const CHAR_WIDTH = 7;

/** A nice axis maximum (1, 2 or 5 × 10ⁿ) at least `max`. */
function axisMax(max: number): number {
  if (max <= 0) return 1;
  const step = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * step >= max) return m * step;
  return 10 * step;
}

/**
 * The chart, drawn in a viewBox at least MIN_WIDTH wide with its clusters spread evenly, scaled
 * to its card's width; a chart of many clusters keeps its natural width (`min-width`) and the
 * card scrolls. The legend is HTML beside it, so a long group name wraps instead of being cut.
 */
function chart(spec: ChartSpec): Markup {
  const { series, categories } = spec;
  const top = axisMax(Math.max(0, ...categories.flatMap((c) => c.values)));
  const groupWidth = series.length * BAR + (series.length - 1) * BAR_GAP;
  const slots = Math.max(1, categories.length);
  const natural = LEFT + slots * (groupWidth + GROUP_GAP) + RIGHT;
  const width = Math.max(natural, MIN_WIDTH);
  const slot = (width - LEFT - RIGHT) / slots;
  const base = TOP + PLOT_HEIGHT;
  const height = base + 48;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const y = base - f * PLOT_HEIGHT;
    return html`<line class="grid" x1="${LEFT}" x2="${width - RIGHT}" y1="${y}" y2="${y}"/><text class="tick" x="${LEFT - 6}" y="${y + 4}" text-anchor="end">${num(top * f)}</text>`;
  });
  const maxLabel = Math.max(4, Math.floor((slot - 8) / CHAR_WIDTH));
  const groups = categories.map((c, ci) => {
    const centre = LEFT + ci * slot + slot / 2;
    const x0 = centre - groupWidth / 2;
    const rects = series.map((name, i) => {
      const value = c.values[i] ?? 0;
      const h = Math.round((value / top) * PLOT_HEIGHT * 100) / 100;
      const x = x0 + i * (BAR + BAR_GAP);
      return html`<rect x="${x}" y="${base - h}" width="${BAR}" height="${h}" fill="${colour(i)}" data-category="${c.label}" data-series="${name}" data-value="${value}"><title>${c.label} · ${name}: ${num(value)}</title></rect>`;
    });
    const label = c.label.length > maxLabel ? `${c.label.slice(0, maxLabel - 1)}…` : c.label;
    return html`<g>${rects}<text class="label" x="${centre}" y="${base + 18}" text-anchor="middle"><title>${c.label}</title>${label}</text></g>`;
  });
  const legend = series.map(
    (name, i) => html`<li><span class="swatch" style="background:${colour(i)}"></span>${name}</li>`,
  );
  return html`<svg id="${spec.id}" class="bars" xmlns="http://www.w3.org/2000/svg" width="100%" viewBox="0 0 ${width} ${height}" style="min-width:${natural}px" role="img" aria-label="${spec.label}">${ticks}<line class="axis" x1="${LEFT}" x2="${LEFT}" y1="${TOP}" y2="${base}"/><line class="axis" x1="${LEFT}" x2="${width - RIGHT}" y1="${base}" y2="${base}"/><text class="axis-title" x="14" y="${TOP + PLOT_HEIGHT / 2}" transform="rotate(-90 14 ${TOP + PLOT_HEIGHT / 2})" text-anchor="middle">records</text><text class="axis-title" x="${LEFT + (width - LEFT - RIGHT) / 2}" y="${base + 38}" text-anchor="middle">${spec.xTitle}</text>${groups}</svg><ul class="legend" data-chart="${spec.id}">${legend}</ul>`;
}

/** Every bucket's counts with the differences the findings explain. */
function bucketTable(s: LinkedFindings): Markup {
  const groups = Object.keys(s.processed);
  return table(
    'Per time bucket',
    'all layers',
    [
      'bucket (UTC)',
      'produced',
      'in log',
      'not in ledger',
      'extra copies in log',
      'lost',
      'UNKNOWN absent',
      ...groups.flatMap((g) => [
        `processed · ${g}`,
        `pending · ${g}`,
        `redelivered · ${g}`,
        `suppressed · ${g}`,
        `acted twice · ${g}`,
      ]),
    ],
    s.buckets.map((b) => [
      bucketLabel(b),
      num(b.produced),
      num(b.inLog),
      num(b.notInLedger),
      num(b.duplicatesInLog),
      num(b.lost),
      num(b.unknownAbsent),
      ...groups.flatMap((g) => [
        num(b.processed[g] ?? 0),
        num(b.pending[g] ?? 0),
        num(b.redelivered[g] ?? 0),
        num(b.suppressed?.[g] ?? 0),
        num(b.actedTwice?.[g] ?? 0),
      ]),
    ]),
  );
}

function tile(
  label: string,
  value: string,
  tone: 'ok' | 'warn' | 'bad' | 'info',
  note = '',
): Markup {
  return html`<div class="tile ${tone}"><div class="tile-label">${label}</div><div class="tile-value">${value}</div>${note === '' ? '' : html`<div class="tile-note">${note}</div>`}</div>`;
}

/** Per group, over the stream's rows: redelivered, suppressed by its once guard, acted twice. */
function redeliveryTiles(s: LinkedFindings): Markup[] {
  const sum = (pick: (b: LinkedFindings['buckets'][number]) => number | undefined) =>
    s.buckets.reduce((total, b) => total + (pick(b) ?? 0), 0);
  return Object.keys(s.processed).map((g) => {
    const twice = sum((b) => b.actedTwice?.[g]);
    return tile(
      `redelivered · ${g}`,
      num(sum((b) => b.redelivered[g])),
      twice > 0 ? 'bad' : 'ok',
      `suppressed ${num(sum((b) => b.suppressed?.[g]))} · acted twice ${num(twice)}`,
    );
  });
}

function tiles(s: LinkedFindings): Markup {
  const lost = seqsIn(s.lost);
  const pending = seqsIn(s.pending);
  // Extra copies in the log and extra deliveries, summed over the bucket table (which no cap
  // shortens), so the tile equals its columns, each group's redelivered tile, and the findings
  // tables' "extra" columns: a seq delivered three times is two extra deliveries.
  const producerDup = s.buckets.reduce((sum, b) => sum + b.duplicatesInLog, 0);
  const consumerDup = s.buckets.reduce(
    (sum, b) => sum + Object.values(b.redelivered).reduce((n, r) => n + r, 0),
    0,
  );
  const absent = s.unknownAbsent.reduce((sum, [from, to]) => sum + to - from + 1, 0);
  const groups = Object.entries(s.processed).map(([g, n]) =>
    tile(`processed · ${g}`, num(n), n >= s.inLog ? 'ok' : 'warn'),
  );
  return html`<div class="tiles">${[
    tile('produced', num(s.produced), 'info'),
    tile('in log', num(s.inLog), s.inLog >= s.produced ? 'ok' : 'warn'),
    groups,
    redeliveryTiles(s),
    tile('lost', num(lost), lost > 0 ? 'bad' : 'ok', 'ACKED, absent from the log'),
    tile(
      'duplicates',
      num(producerDup + consumerDup),
      producerDup + consumerDup > 0 ? 'warn' : 'ok',
      `extra copies: producer ${num(producerDup)} · consumer ${num(consumerDup)}`,
    ),
    tile('pending', num(pending), pending > 0 ? 'warn' : 'ok', 'in the log, not yet processed'),
    tile(
      'UNKNOWN settled',
      num(s.unknownLanded.length + absent),
      'info',
      `landed ${num(s.unknownLanded.length)} · absent ${num(absent)}`,
    ),
  ]}</div>`;
}

function table(
  title: string,
  layer: string,
  headers: readonly string[],
  rows: ReadonlyArray<readonly Value[]>,
): Markup {
  const body =
    rows.length === 0
      ? html`<tr><td class="none" colspan="${headers.length}">none</td></tr>`
      : rows.map((cells) => html`<tr>${cells.map((c) => html`<td>${c}</td>`)}</tr>`);
  return html`<section class="findings"><h3>${title} <span class="layer">${layer}</span></h3><table><thead><tr>${headers.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody>${body}</tbody></table></section>`;
}

/** Where each lost seq was acknowledged: its own partition and offset, seq by seq. */
function ackedAt(l: AuditFindings['lost'][number]): Value {
  // A report stored before `ackedEach` names the first seq's place only.
  const each = l.ackedEach ?? (l.acked ? [{ seq: l.from, ...l.acked }] : []);
  if (each.length === 0) return '—';
  const rest = l.to - l.from + 1 - each.length;
  return html`<ul>${each.map((a) => html`<li>${a.seq}: p${a.partition} @ ${a.offset}</li>`)}${rest > 0 ? html`<li>${num(rest)} more not shown</li>` : ''}</ul>`;
}

function findings(s: AuditFindings): Markup {
  return html`<div class="tables">${[
    table(
      'Producer-side duplicates',
      'producer',
      ['seq', 'copies (partition / offset / session)', 'extra copies'],
      s.producerDuplicates.map((d) => [
        d.seq,
        html`<ul>${d.copies.map((c) => html`<li>p${c.partition} @ ${c.offset} · ${c.session}</li>`)}</ul>`,
        d.copies.length - 1,
      ]),
    ),
    table(
      'Consumer-side duplicates',
      'consumer',
      ['group', 'seqs', 'times', 'extra deliveries'],
      s.consumerDuplicates.map((d) => [
        d.group,
        range(d.from, d.to),
        d.times,
        num((d.to - d.from + 1) * (d.times - 1)),
      ]),
    ),
    table(
      'Lost',
      'log',
      ['seqs', 'acknowledged at (partition / offset)'],
      s.lost.map((l) => [range(l.from, l.to), ackedAt(l)]),
    ),
    table(
      'Pending',
      'consumer',
      ['group', 'seqs'],
      s.pending.map((p) => [p.group, range(p.from, p.to)]),
    ),
    table(
      'UNKNOWN landed',
      'producer',
      ['seq', 'partition', 'offset'],
      s.unknownLanded.map((u) => [u.seq, u.partition, u.offset]),
    ),
    table(
      'UNKNOWN absent',
      'producer',
      ['seqs'],
      s.unknownAbsent.map(([from, to]) => [range(from, to)]),
    ),
  ]}</div>`;
}

const STYLE = `
:root{color-scheme:light;--ok:#2e7d32;--warn:#b26a00;--bad:#c62828;--info:#1f4e79}
*{box-sizing:border-box}
body{margin:0;padding:24px 32px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2330;background:#f6f7f9}
h1{margin:0 0 4px;font-size:22px}h2{margin:32px 0 12px;font-size:18px;border-bottom:1px solid #dde1e6;padding-bottom:4px}
h3{margin:0 0 6px;font-size:14px}.meta{color:#5b6472;margin:0 0 16px}
.tiles{display:flex;flex-wrap:wrap;gap:10px;margin-bottom:16px}
.tile{background:#fff;border:1px solid #dde1e6;border-left:5px solid var(--info);border-radius:6px;padding:8px 12px;min-width:130px}
.tile.ok{border-left-color:var(--ok)}.tile.warn{border-left-color:var(--warn)}.tile.bad{border-left-color:var(--bad)}
.tile-label{font-size:12px;color:#5b6472;text-transform:uppercase;letter-spacing:.03em}
.tile-value{font-size:24px;font-weight:600;font-variant-numeric:tabular-nums}.tile-note{font-size:12px;color:#5b6472}
.chart{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:8px;overflow-x:auto}
svg.bars{display:block;height:auto}
.legend{list-style:none;display:flex;flex-wrap:wrap;gap:4px 18px;margin:4px 0 0;padding:0 0 0 64px;font-size:12px}
.legend li{display:flex;align-items:center;gap:6px;overflow-wrap:anywhere}.swatch{width:12px;height:12px;border-radius:50%;flex:none}
svg text{font:12px system-ui,sans-serif;fill:#1d2330}svg .tick{fill:#5b6472}svg .axis-title{fill:#5b6472;font-style:italic}
svg .grid{stroke:#e8ebef}svg .axis{stroke:#5b6472}
.wide{margin:12px 0;overflow-x:auto}
.tables{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:12px}
.findings{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:10px 12px}
.layer{font-size:11px;font-weight:500;background:#e8eef6;color:var(--info);border-radius:10px;padding:1px 8px;margin-left:4px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{text-align:left;padding:3px 6px;border-bottom:1px solid #eef0f3;vertical-align:top}
th{font-size:12px;color:#5b6472;font-weight:500}td.none{color:#8a93a0;font-style:italic}
ul{margin:0;padding-left:16px}
nav.pages{margin:12px 0;color:#5b6472}nav.pages a{margin-left:12px;font-weight:600;color:var(--info)}
`;

/**
 * Which streams of the report a page shows (its `streams` are those): the first one's index in
 * the report, how many the report has, and the links to the first and next pages.
 */
export interface HtmlPage {
  readonly first: number;
  readonly total: number;
  readonly firstPage?: string | undefined;
  readonly next?: string | undefined;
}

/** "streams 21–40 of 200" with the links to the first and next pages, when there are others. */
function pageNav(page: HtmlPage, shown: number): Markup | string {
  if (page.first === 0 && page.next === undefined) return '';
  const [from, to] = [page.first + 1, page.first + shown];
  const span = shown === 0 ? 'none' : from === to ? num(from) : `${num(from)}–${num(to)}`;
  const links = [
    page.first > 0 && page.firstPage !== undefined
      ? html`<a class="first" href="${page.firstPage}">first page</a>`
      : '',
    page.next === undefined
      ? ''
      : html`<a class="next" rel="next" href="${page.next}">next page</a>`,
  ];
  return html`<nav class="pages">streams ${span} of ${num(page.total)} ${links}</nav>`;
}

/**
 * The report as a complete, self-contained HTML document: of the report's streams, or (with
 * `page`) of one page of them, with links to the first and next pages.
 */
export function renderAuditHtml(report: AuditReport, pages?: HtmlPage): string {
  const first = pages?.first ?? 0;
  const streams = report.streams.map(
    (s, i) =>
      html`<section class="stream"><h2>Stream ${s.stream}</h2>${tiles(s)}<div class="chart">${chart(bucketChart(s, first + i))}</div><div class="wide">${bucketTable(s)}</div>${findings(s)}</section>`,
  );
  const nav = pages === undefined ? '' : pageNav(pages, report.streams.length);
  const progress = report.complete
    ? 'log read to its end'
    : 'log NOT read to its end: the next run continues from the checkpoint; nothing is judged lost yet';
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Audit of ${report.topic} at ${report.at}</title>
<style>${new Markup(STYLE)}</style>
</head>
<body>
<h1>Audit of <code>${report.topic}</code></h1>
<p class="meta">at <time datetime="${report.at}">${report.at}</time> · ${progress} · ${num(report.scanned)} records read by this run, ${num(report.scannedTotal)} by all runs · ${num(report.untracked)} untracked · ${num(report.unread)} removed before any audit read them · ${num(report.settled.landed)} UNKNOWN settled as landed, ${num(report.settled.notWritten)} as not written</p>
${nav}
<h2>Records per layer</h2>
<div class="chart">${chart(streamChart(report))}</div>
${streams}
${nav}
</body>
</html>
`;
  return page.value;
}
