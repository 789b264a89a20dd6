import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createAuditor } from '../../../../functions/core/audit/auditor.js';
import {
  addCount,
  CountedView,
  emptyCounts,
} from '../../../../functions/core/audit/counted-view.js';
import type { AuditPorts, AuditReport } from '../../../../functions/core/audit/ports.js';
import { REPORT_ROWS } from '../../../../functions/core/audit/retention.js';
import type { CheckpointJson } from '../../../../functions/core/audit/topic-log.js';
import type { BucketCount } from '../../../../functions/core/receipts/receipts-input.js';

// The count-only receipts a checkpoint carries per group (counted-view.ts): folded by the
// retention and past what a report lists, stored as delta pairs; and at a large user's size,
// 1,000 groups posting a day of 300 s buckets each, through the auditor.

const MIN = 60_000;
const T = Date.UTC(2026, 0, 5);

describe('CountedView', () => {
  it('folds buckets before the retention, and those no report lists, into one total a group', () => {
    const view = new CountedView();
    const c = emptyCounts();
    for (let i = 0; i < 40; i++) addCount(c, T + i * MIN, i + 1, view.foldedBefore);
    view.set('billing', T, c);
    view.fold(T + 5 * MIN); // buckets 0–4 (15 in all)
    expect(c.older).toBe(15);
    expect(c.olderSince).toBe(T);
    // Log buckets at minutes 41–45: the newest 24 starts are 21–39 and 41–45; 5–20 are folded.
    view.foldUnlisted(
      [41, 42, 43, 44, 45].map((m) => T + m * MIN),
      REPORT_ROWS,
      MIN,
    );
    expect([...c.buckets.keys()].map((s) => (s - T) / MIN)).toEqual(
      Array.from({ length: 19 }, (_, i) => 21 + i),
    );
    expect(c.older).toBe(15 + ((6 + 21) * 16) / 2);
    expect(c.olderUntil).toBe(T + 21 * MIN);
    // A late count in a folded bucket goes to the total; the JSON round trip keeps everything.
    addCount(c, T + MIN, 100, view.foldedBefore);
    const back = new CountedView(JSON.parse(JSON.stringify(view.toJSON())));
    expect(back.get('billing')).toEqual(view.get('billing'));
    expect(back.foldedBefore).toBe(T + 5 * MIN);
    expect(c.older).toBe(331);
  });

  it('keeps a group with no more starts than a report lists whole', () => {
    const view = new CountedView();
    const c = emptyCounts();
    for (let i = 0; i < REPORT_ROWS; i++) addCount(c, T + i * MIN, 1, 0);
    view.set('billing', T, c);
    view.foldUnlisted([], REPORT_ROWS, MIN);
    expect(c.buckets.size).toBe(REPORT_ROWS);
    expect(c.olderSince).toBeUndefined();
  });
});

describe('count-only receipts of 1,000 groups', () => {
  it('report every post and keep at most REPORT_ROWS buckets a group, the checkpoint far under its item', async () => {
    const GROUPS = Array.from(
      { length: 1000 },
      (_, i) => `consumer-group-${String(i).padStart(4, '0')}`,
    );
    const posts = new Map<string, Array<{ at: number; buckets: BucketCount[] }>>();
    let clock = T;
    let checkpoint: { state: CheckpointJson; version: number } | undefined;
    let read = 0;
    let posted = 0;
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const ports: AuditPorts = {
      clock: () => clock,
      ledger: { forEachBlock: async () => {}, find: async () => undefined, write: async () => 'w' },
      log: {
        scan: async () => ({ scanned: 0, next: new Map(), logStart: new Map(), complete: true }),
      },
      receipts: {
        forEachBatch: async () => {},
        counts: async () => {
          throw new Error('read by write time here');
        },
        countsSince: async (group, _topic, after, onCounts) => {
          for (const p of posts.get(group) ?? [])
            if (after === undefined || p.at > after) {
              read++;
              onCounts(p.buckets, p.at);
            }
        },
      },
      checkpoints: {
        load: async () => checkpoint && structuredClone(checkpoint),
        save: async (_topic, state, version) => {
          checkpoint = { state: JSON.parse(JSON.stringify(state)), version: version + 1 };
        },
      },
    };
    const run = () =>
      createAuditor(ports).run({
        topic: 'orders',
        groups: GROUPS,
        streams: [],
        scanDeadlineAt: clock + MIN,
        horizonMs: 5 * MIN,
        bucketMs: 5 * MIN,
        retentionMs: 7 * 86_400_000,
        ledgerLagMs: MIN,
      });
    const total = (report: AuditReport) =>
      report.topicBuckets.reduce(
        (n, row) => n + Object.values(row.counted).reduce((a, b) => a + b, 0),
        0,
      );
    const sizes: number[] = [];
    for (let day = 0; day < 2; day++) {
      // Each group posts 96 buckets of 300 s a day (8 hours), counts up to a million, in 2 posts.
      for (const group of GROUPS) {
        const list = posts.get(group) ?? [];
        for (let part = 0; part < 2; part++) {
          const buckets = Array.from({ length: 48 }, (_, i): BucketCount => {
            const start = T + day * 86_400_000 + (part * 48 + i) * 5 * MIN;
            const count = Math.floor(random() * 1_000_000);
            posted += count;
            return {
              start: new Date(start).toISOString(),
              end: new Date(start + 5 * MIN).toISOString(),
              count,
            };
          });
          list.push({ at: T + day * 86_400_000 + (part + 1) * 4 * 3_600_000 + 2 * MIN, buckets });
        }
        posts.set(group, list);
      }
      clock = T + (day + 1) * 86_400_000;
      read = 0;
      const report = await run();
      expect(read).toBe(2 * GROUPS.length); // the day's posts, none of the days before
      expect(total(report)).toBe(posted);
      const groups = checkpoint?.state.counted?.groups ?? [];
      expect(groups).toHaveLength(GROUPS.length);
      for (const [, , , , flat] of groups) expect(flat.length / 2).toBeLessThanOrEqual(REPORT_ROWS);
      sizes.push(gzipSync(JSON.stringify(checkpoint?.state)).length);
    }
    // The store's item takes 380 KB gzipped (MAX_CHECKPOINT_BYTES): stated bound here 200 KB.
    expect(Math.max(...sizes)).toBeLessThan(200 * 1024);
    console.log(`1,000 groups: checkpoint gzipped ${sizes.join(' / ')} bytes after days 1 and 2`);
  }, 120_000);
});
