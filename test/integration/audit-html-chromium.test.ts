import { existsSync } from 'node:fs';
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
