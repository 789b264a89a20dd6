import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Admin } from 'kafkajs';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import { createTopic, loadHandlers, produceEvent } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { uniqueName } from '../helpers/unique-name.js';

// A real audit report, served by GET /v3/clusters/{id}/audits/{id}?format=html, rendered by
// Debian's Chromium (installed by npm test's pretest step, infra/local/install-debian-packages.sh):
// the charts must be drawn, with bars of real size.
const CHROMIUM = process.env.TALLY_CHROMIUM ?? '/usr/bin/chromium';
/** Test evidence: the rendered report (git-ignored, beside the functions' logs). */
const EVIDENCE = 'test/.logs/audit-html-chromium';

const cluster = () => ({ cluster_id: inject('kafkaClusterId') });

async function postReceipts(group: string, stream: string, seqs: number[][]): Promise<void> {
  const receipts = (await import('../../functions/receipts/http-handler.js')).handler;
  const answer = await receipts(
    httpEvent({ pathParameters: cluster(), body: JSON.stringify({ group, stream, seqs }) }),
    lambdaContext(),
  );
  expect(answer.statusCode, answer.body).toBe(202);
}

/** Audits the topic for the group and answers its report's page. */
async function auditPage(topic: string, group: string): Promise<string> {
  const start = (await import('../../functions/audit/http-handler.js')).handler;
  const started = await start(
    httpEvent({ pathParameters: cluster(), body: JSON.stringify({ topic, groups: [group] }) }),
    lambdaContext(),
  );
  expect(started.statusCode, started.body).toBe(200);
  const { auditId } = JSON.parse(started.body ?? '') as { auditId: string };
  const read = (await import('../../functions/audit/read-handler.js')).handler;
  const response = await read(
    httpEvent({
      routeKey: 'GET /v3/clusters/{cluster_id}/audits/{audit_id}',
      pathParameters: { ...cluster(), audit_id: auditId },
      query: { format: 'html' },
    }),
    lambdaContext(),
  );
  expect(response.headers?.['content-type']).toContain('text/html');
  return response.body ?? '';
}

describe('audit HTML report in headless Chromium', () => {
  const admin: Admin = testKafka('tally-test-audit-html').admin();
  let browser: Browser;

  beforeAll(async () => {
    await usePublishEnv({ TALLY_AUDIT_HORIZON_SECONDS: '0' });
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `no Chromium at ${CHROMIUM}: run \`bash infra/local/install-debian-packages.sh\` as root ` +
          '(npm test does it first), or `apt-get install -y chromium`, or set TALLY_CHROMIUM to a Chromium binary',
      );
    }
    await admin.connect();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await admin.disconnect();
  });

  it("fits its card: charts at the card's width, no text cut, tiles equal to the tables, each lost seq at its own offset", async () => {
    const topic = await createTopic(admin, 1);
    const api = await loadHandlers();
    const body = [1, 2, 3, 4, 5, 6]
      .map((n) => JSON.stringify({ value: { type: 'JSON', data: { n } } }))
      .join('');
    expect((await api.produce(produceEvent(topic, body))).statusCode).toBe(200);
    // Seqs 1 and 2 (offsets 0 and 1) are taken from the log: lost, each at its own offset.
    await admin.fetchTopicOffsets(topic);
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '2' }] });
    // A group with a long name processes 3–6, and 4–5 twice more: 4 extra deliveries.
    const group = uniqueName('billing-with-a-rather-long-consumer-group-name');
    await postReceipts(group, topic, [[3, 6]]);
    await postReceipts(group, topic, [[4, 5]]);
    await postReceipts(group, topic, [[4, 5]]);
    const html = await auditPage(topic, group);

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.setContent(html, { waitUntil: 'load' });
    mkdirSync(EVIDENCE, { recursive: true });
    await page.screenshot({ path: join(EVIDENCE, 'report.png'), fullPage: true });

    const layout = await page.$$eval('.chart', (cards) =>
      cards.map((card) => {
        const svg = card.querySelector('svg.bars');
        if (svg === null) throw new Error('a chart card without its chart');
        const box = svg.getBoundingClientRect();
        // The card's width inside its padding (8 px a side).
        const inner = card.clientWidth - 16;
        const cut = [...svg.querySelectorAll('text')]
          .map((t) => ({ text: t.textContent, r: t.getBoundingClientRect() }))
          .filter(
            ({ r }) =>
              r.left < box.left - 1 ||
              r.right > box.right + 1 ||
              r.top < box.top - 1 ||
              r.bottom > box.bottom + 1,
          )
          .map(({ text }) => text);
        const cardBox = card.getBoundingClientRect();
        const legend = [...card.querySelectorAll('.legend li')].map((li) => ({
          text: li.textContent,
          fits:
            li.scrollWidth <= li.clientWidth + 1 &&
            li.getBoundingClientRect().right <= cardBox.right + 1,
        }));
        return {
          id: svg.id,
          width: box.width,
          inner,
          cut,
          legend,
          scrolls: card.scrollWidth > card.clientWidth,
        };
      }),
    );
    expect(layout.map((c) => c.id)).toEqual(['layers-chart', 'buckets-chart-0']);
    for (const chart of layout) {
      // The chart fills its card (one stream, one bucket: it once drew 174 px of ~1,200).
      expect(chart.width, chart.id).toBeGreaterThan(chart.inner * 0.95);
      expect(chart.scrolls, chart.id).toBe(false);
      // Every axis label, tick and category label lies inside the drawing: none is cut.
      expect(chart.cut, chart.id).toEqual([]);
      expect(chart.legend.map((l) => l.text)).toEqual([
        'produced',
        'in log',
        `processed by ${group}`,
      ]);
      expect(
        chart.legend.filter((l) => !l.fits),
        chart.id,
      ).toEqual([]);
    }
    const texts = await page.$$eval('svg.bars text', (all) => all.map((t) => t.textContent));
    expect(texts).toContain('time bucket (UTC)');

    // Tiles equal the tables' totals.
    const tile = (label: string) =>
      page
        .locator('.tile', { has: page.locator('.tile-label', { hasText: label }) })
        .locator('.tile-value')
        .textContent();
    const column = async (title: string, header: string) =>
      page.$$eval(
        'section.findings',
        (sections, [t, h]) => {
          const section = sections.find((s) =>
            s.querySelector('h3')?.textContent?.startsWith(t as string),
          );
          const headers = [...(section?.querySelectorAll('th') ?? [])].map((th) => th.textContent);
          const at = headers.indexOf(h as string);
          return [...(section?.querySelectorAll('tbody tr:not(:has(td.none))') ?? [])].reduce(
            (sum, tr) =>
              sum + Number(tr.querySelectorAll('td')[at]?.textContent?.replace(/,/g, '')),
            0,
          );
        },
        [title, header],
      );
    const extraDeliveries = await column('Consumer-side duplicates', 'extra deliveries');
    const extraCopies = await column('Producer-side duplicates', 'extra copies');
    expect(extraDeliveries).toBe(4);
    expect(await tile('duplicates')).toBe(String(extraCopies + extraDeliveries));
    expect(await tile(`redelivered · ${group}`)).toBe(String(extraDeliveries));
    expect(await column('Per time bucket', `redelivered · ${group}`)).toBe(extraDeliveries);
    expect(await column('Per time bucket', 'lost')).toBe(Number(await tile('lost')));
    // Each lost seq names its own offset.
    const lost = await page
      .locator('section.findings', { has: page.locator('h3', { hasText: /^Lost/ }) })
      .locator('tbody tr')
      .textContent();
    expect(lost).toContain('1: p0 @ 0');
    expect(lost).toContain('2: p0 @ 1');
    await page.close();
  });

  it('draws produced, in-log and processed bars for every stream and bucket', async () => {
    const cluster = { cluster_id: inject('kafkaClusterId') };
    const topic = await createTopic(admin, 1);
    const api = await loadHandlers();
    const body = ['a', 'b', 'c', 'd']
      .map((v) => JSON.stringify({ value: { type: 'STRING', data: v } }))
      .join('');
    expect((await api.produce(produceEvent(topic, body))).statusCode).toBe(200);
    const group = uniqueName('billing');
    const receipts = (await import('../../functions/receipts/http-handler.js')).handler;
    await receipts(
      httpEvent({
        pathParameters: cluster,
        body: JSON.stringify({ group, stream: topic, seqs: [[1, 2]] }),
      }),
      lambdaContext(),
    );
    const start = (await import('../../functions/audit/http-handler.js')).handler;
    const started = await start(
      httpEvent({ pathParameters: cluster, body: JSON.stringify({ topic, groups: [group] }) }),
      lambdaContext(),
    );
    expect(started.statusCode, started.body).toBe(200);
    const { auditId } = JSON.parse(started.body ?? '') as { auditId: string };
    const read = (await import('../../functions/audit/read-handler.js')).handler;
    const response = await read(
      httpEvent({
        routeKey: 'GET /v3/clusters/{cluster_id}/audits/{audit_id}',
        pathParameters: { ...cluster, audit_id: auditId },
        query: { format: 'html' },
      }),
      lambdaContext(),
    );
    expect(response.headers?.['content-type']).toContain('text/html');

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('request', (r) => {
      if (!r.url().startsWith('data:') && r.url() !== 'about:blank') problems.push(r.url());
    });
    await page.setContent(response.body ?? '', { waitUntil: 'load' });

    expect(await page.title()).toContain(topic);
    const drawn = await page.$$eval('svg.bars', (charts) =>
      charts.map((svg) => ({
        id: svg.id,
        width: svg.getBoundingClientRect().width,
        bars: [...svg.querySelectorAll('rect')].map((r) => ({
          series: r.getAttribute('data-series'),
          value: Number(r.getAttribute('data-value')),
          height: r.getBoundingClientRect().height,
        })),
      })),
    );
    expect(drawn.map((c) => c.id)).toEqual(['layers-chart', 'buckets-chart-0']);
    for (const chart of drawn) {
      expect(chart.width).toBeGreaterThan(100);
      const byValue = (series: string) => chart.bars.find((b) => b.series === series);
      expect(byValue('produced')).toMatchObject({ value: 4 });
      expect(byValue('in log')).toMatchObject({ value: 4 });
      expect(byValue(`processed by ${group}`)).toMatchObject({ value: 2 });
      // Drawn to scale: 4 records stand twice as tall as 2.
      const produced = byValue('produced')?.height ?? 0;
      expect(produced).toBeGreaterThan(10);
      expect(byValue(`processed by ${group}`)?.height).toBeCloseTo(produced / 2, 0);
    }
    const screenshot = await page.locator('#layers-chart').screenshot();
    expect(screenshot.length).toBeGreaterThan(1000);
    expect(await page.locator('h3', { hasText: 'Pending' }).count()).toBe(1);
    expect(problems).toEqual([]);
    await page.close();
  });
});
