import { gzipSync } from 'node:zlib';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAuditStore } from '../../functions/adapters/dynamodb/audit-store.js';
import { createReceiptsStore } from '../../functions/adapters/dynamodb/receipts-store.js';
import { createAuditor } from '../../functions/core/audit/auditor.js';
import type { AuditPorts, AuditReport, AuditRequest } from '../../functions/core/audit/ports.js';
import { REPORT_ROWS } from '../../functions/core/audit/retention.js';
import type { BucketCount } from '../../functions/core/receipts/receipts-input.js';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import { countingClient } from '../helpers/counting-client.js';
import { type DynamoDbProxy, startDynamoDbProxy, tripsOf } from '../helpers/dynamodb-proxy.js';
import { localTablesForFile } from '../helpers/local-tables.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 31, reads bounded by work: the audit reads a topic's count-only receipts written since
// its last run (their sort key starts with the write time) and carries each group's counts per
// bucket in its checkpoint, folded past the retention as the log's buckets are. On the local
// DynamoDB API through a proxy, with the real receipts and audit stores; the log is a stand-in
// (one untracked record per run) and the clock is injected, so months pass in seconds.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 0, 5);
const GROUPS = ['billing', 'search'];
const LAG = 60_000;

describe('count-only receipts read by write time', () => {
  const { table } = localTablesForFile('counts-since');
  let proxy: DynamoDbProxy;
  let proxied: DynamoDBDocumentClient;

  beforeAll(async () => {
    proxy = await startDynamoDbProxy(inject('dynamodbEndpoint'));
    proxied = DynamoDBDocumentClient.from(localDynamoDbClient(proxy.endpoint));
  });
  afterAll(async () => {
    proxied?.destroy();
    await proxy?.close();
  });

  /** An audit of `topic` on the real stores (through the proxy), on a clock the test moves. */
  function world(topic: string, options: { withoutCountsSince?: boolean } = {}) {
    const clock = { audit: T0, store: T0 };
    const { client, read } = countingClient(proxied, [table('ReceiptsTable')]);
    const receipts = createReceiptsStore(client, table('ReceiptsTable'), () => clock.store);
    const store = createAuditStore(proxied, table('AuditsTable'));
    const records: number[] = [];
    const receiptsPort: AuditPorts['receipts'] = {
      forEachBatch: async () => {},
      counts: receipts.counts,
      ...(!options.withoutCountsSince && { countsSince: receipts.countsSince }),
    };
    const ports: AuditPorts = {
      clock: () => clock.audit,
      ledger: {
        forEachBlock: async () => {},
        find: async () => undefined,
        write: async () => 'written',
      },
      log: {
        // One untracked record per run, stamped with the run's time.
        async scan(_topic, request) {
          const from = request.from?.get(0) ?? 0;
          records.push(clock.audit);
          return {
            scanned: records.length - from,
            next: new Map([[0, records.length]]),
            logStart: new Map([[0, 0]]),
            complete: true,
          };
        },
      },
      receipts: receiptsPort,
      checkpoints: { load: store.load, save: store.saveCheckpoint },
    };
    const request = (): AuditRequest => ({
      topic,
      groups: GROUPS,
      streams: [],
      scanDeadlineAt: clock.audit + 60_000,
      horizonMs: 5 * 60_000,
      bucketMs: HOUR,
      retentionMs: 7 * DAY,
      ledgerLagMs: LAG,
    });
    let posted = 0;
    return {
      clock,
      read,
      get posted() {
        return posted;
      },
      /** A group posts `count` in each hour bucket starting at `starts`, dated `at`. */
      async post(group: string, starts: number | number[], count: number, at = clock.store) {
        clock.store = at;
        const buckets = [starts].flat().map(
          (start): BucketCount => ({
            start: new Date(start).toISOString(),
            end: new Date(start + HOUR).toISOString(),
            count,
          }),
        );
        await receipts.writeBuckets(group, topic, buckets);
        posted += count * buckets.length;
      },
      audit: () => createAuditor(ports).run(request()),
      request,
      ports,
      checkpoint: () => store.load(topic),
    };
  }

  const countedIn = (report: AuditReport, group: string) =>
    report.topicBuckets.reduce((n, row) => n + (row.counted[group] ?? 0), 0);

  it('a run after 20 earlier ones reads only the posts written since the last (one query per group)', async () => {
    const topic = uniqueName('counts-n');
    const w = world(topic);
    for (let run = 0; run < 20; run++) {
      for (let i = 0; i < 5; i++) await w.post('billing', T0 + run * HOUR, 1, T0 + run * HOUR + i);
      w.clock.audit = T0 + run * HOUR + 5 * 60_000;
      await w.audit();
    }
    await w.post('billing', T0 + 20 * HOUR, 2, T0 + 20 * HOUR);
    await w.post('billing', T0 + 20 * HOUR, 3, T0 + 20 * HOUR + 1);
    await w.post('search', T0 + 20 * HOUR, 4, T0 + 20 * HOUR + 2);
    w.clock.audit = T0 + 20 * HOUR + 5 * 60_000;
    w.read.items = 0;
    let report: AuditReport | undefined;
    const trips = await tripsOf(
      proxy,
      { TALLY_RECEIPTS_TABLE: table('ReceiptsTable') },
      async () => {
        report = await w.audit();
        return { statusCode: 200 };
      },
    );
    // The 100 posts of the earlier runs are not read again: the three new ones are.
    expect(w.read.items).toBe(3);
    expect(trips.flat().filter((call) => call === 'Query receipts')).toHaveLength(GROUPS.length);
    expect(countedIn(report as AuditReport, 'billing')).toBe(105);
    expect(countedIn(report as AuditReport, 'search')).toBe(4);

    // The read before (every post, every run) on the same table: 103 items for the same report.
    const whole = world(topic, { withoutCountsSince: true });
    whole.clock.audit = w.clock.audit;
    whole.read.items = 0;
    const before = await createAuditor({
      ...whole.ports,
      checkpoints: { load: async () => undefined, save: async () => {} },
    }).run(whole.request());
    expect(whole.read.items).toBe(103);
    expect(before.topicBuckets.map((r) => r.counted)).toEqual(
      (report as AuditReport).topicBuckets.map((r) => r.counted),
    );
  });

  it('90 days of daily runs: the counts are those posted, each run reads its day, the checkpoint stays bounded', async () => {
    const topic = uniqueName('counts-90');
    const w = world(topic);
    const bytes: number[] = [];
    const buckets: number[] = [];
    for (let day = 0; day < 90; day++) {
      const runAt = T0 + day * DAY + 12 * HOUR;
      // Each group posts its counts of the day's hours before the run, four hours a post.
      for (const [g, group] of GROUPS.entries())
        for (let h = 0; h < 12; h += 4) {
          const hours = [0, 1, 2, 3].map((i) => T0 + day * DAY + (h + i) * HOUR);
          await w.post(group, hours, g + 1, T0 + day * DAY + (h + 4) * HOUR - 120_000);
        }
      // Clocks differ: one written by a container 30 s behind, before the run, and one that it
      // dates 20 s before the run but that is stored after it (within the lag): each counted once.
      await w.post('billing', T0 + day * DAY + 11 * HOUR, 1, runAt - 30_000);
      w.clock.audit = runAt;
      w.read.items = 0;
      const report = await w.audit();
      await w.post('billing', T0 + day * DAY + 11 * HOUR, 1, runAt - 20_000);
      // Today's 7 posts, yesterday's late one and the one read again (within the lag).
      expect(w.read.items).toBe(day === 0 ? 7 : 9);
      const posted = w.posted - 1; // the one stored after the run
      expect(countedIn(report, 'billing') + countedIn(report, 'search')).toBe(posted);
      expect(countedIn(report, 'search')).toBe((day + 1) * 24);
      const saved = (await w.checkpoint())?.state;
      bytes.push(gzipSync(JSON.stringify(saved)).length);
      buckets.push(
        Math.max(...(saved?.counted?.groups ?? []).map(([, , , , flat]) => flat.length / 2)),
      );
    }
    // Per group at most the buckets a report lists (older ones are one total).
    expect(Math.max(...buckets)).toBeLessThanOrEqual(REPORT_ROWS);
    // Held at the retention: no growth from day 10 to day 90, and under 4 KB gzipped.
    expect(Math.max(...bytes.slice(10))).toBeLessThanOrEqual((bytes[9] as number) + 64);
    expect(Math.max(...bytes)).toBeLessThan(4096);
    console.log(
      `checkpoint gzipped: day 10 ${bytes[9]} B, day 90 ${bytes[89]} B; buckets per group ${Math.max(...buckets)}`,
    );
  });
});
