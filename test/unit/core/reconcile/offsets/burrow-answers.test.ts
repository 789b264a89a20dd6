import { describe, expect, it } from 'vitest';
import {
  burrowStatus,
  clusterList,
  clusterName,
  consumerCursor,
  consumerDetail,
  consumerList,
  consumerListPage,
  consumerStatus,
  isCluster,
  maxLagPartition,
  notFound,
  topicConsumers,
  topicDetail,
  topicList,
  topicsOf,
} from '../../../../../functions/core/reconcile/offsets/burrow-answers.js';
import type {
  GroupReport,
  PartitionReport,
} from '../../../../../functions/core/reconcile/ports.js';

// Burrow's v3 HTTP shapes of Tally's reports (what an existing Burrow dashboard reads).

const request = { url: '/v3/kafka/local/consumer/billing/status', host: 'tally' };

const partition = (over: Partial<PartitionReport>): PartitionReport => ({
  topic: 'orders',
  partition: 0,
  owner: 'host-1',
  clientId: 'billing-1',
  committed: 90,
  logStart: 0,
  logEnd: 100,
  start: { observedAt: 1_000, committed: 80, logStart: 0, logEnd: 95 },
  end: { observedAt: 2_000, committed: 90, logStart: 0, logEnd: 100 },
  status: 'OK',
  complete: 1,
  currentLag: 10,
  timeLagSeconds: 3,
  ...over,
});

const report: GroupReport = {
  group: 'billing',
  state: 'Stable',
  status: 'WARN',
  complete: 1,
  partitionCount: 2,
  maxLag: 50,
  totalLag: 60,
  maxTimeLagSeconds: 9,
  anomalies: {},
  partitions: [
    partition({}),
    partition({
      partition: 1,
      owner: null,
      clientId: null,
      status: 'WARN',
      currentLag: 50,
      logEnd: 140,
      start: null,
      end: { observedAt: 2_000, committed: null, logStart: 0, logEnd: 140 },
    }),
  ],
};

describe('burrowStatus', () => {
  it("is Burrow's status object, the partition furthest behind as maxlag", () => {
    const status = burrowStatus('local', report, true);
    expect(status).toMatchObject({
      cluster: 'local',
      group: 'billing',
      status: 'WARN',
      complete: 1,
      partition_count: 2,
      totallag: 60,
    });
    expect(status.partitions).toHaveLength(2);
    expect(status.partitions[0]).toEqual({
      topic: 'orders',
      partition: 0,
      owner: 'host-1',
      client_id: 'billing-1',
      status: 'OK',
      start: { offset: 80, timestamp: 1_000, lag: 15 },
      end: { offset: 90, timestamp: 2_000, lag: 10 },
      current_lag: 10,
      complete: 1,
      time_lag_seconds: 3,
    });
    // No owner or commit: empty strings, offset -1 with no lag, as Burrow shows them.
    expect(status.maxlag).toMatchObject({
      partition: 1,
      owner: '',
      client_id: '',
      start: null,
      end: { offset: -1, timestamp: 2_000, lag: 0 },
      current_lag: 50,
    });
  });

  it('keeps only the partitions that are not OK unless all are asked for (/status vs /lag)', () => {
    expect(burrowStatus('local', report, false).partitions.map((p) => p.partition)).toEqual([1]);
  });

  it('has no maxlag for a group without partitions', () => {
    const empty = { ...report, partitions: [], partitionCount: 0 };
    expect(maxLagPartition(empty)).toBeUndefined();
    expect(burrowStatus('local', empty, true).maxlag).toBeNull();
  });
});

describe('consumerStatus', () => {
  it("answers 200 with the group's status", () => {
    const answer = consumerStatus(request, 'local', 'billing', report, true);
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toEqual({
      error: false,
      message: 'consumer status returned',
      status: burrowStatus('local', report, true),
      request,
    });
  });

  it("answers an unknown group 404 with Burrow's NOTFOUND status object", () => {
    expect(consumerStatus(request, 'local', 'nobody', undefined, false)).toEqual({
      statusCode: 404,
      body: {
        error: false,
        message: 'consumer status returned',
        status: {
          cluster: 'local',
          group: 'nobody',
          status: 'NOTFOUND',
          complete: 1,
          partitions: [],
          partition_count: 0,
          maxlag: null,
          totallag: 0,
        },
        request,
      },
    });
  });
});

describe('consumerDetail', () => {
  it('lists each partition by number with its oldest and newest readings', () => {
    const answer = consumerDetail(request, report);
    expect(answer.body).toMatchObject({
      topics: {
        orders: [
          {
            offsets: [
              { offset: 80, timestamp: 1_000, lag: 15 },
              { offset: 90, timestamp: 2_000, lag: 10 },
            ],
            owner: 'host-1',
            client_id: 'billing-1',
            'current-lag': 10,
          },
          {
            offsets: [{ offset: -1, timestamp: 2_000, lag: 0 }],
            owner: '',
            client_id: '',
            'current-lag': 50,
          },
        ],
      },
    });
  });

  it('shows one reading when the oldest and newest are the same', () => {
    const one = partition({ start: partition({}).end });
    const answer = consumerDetail(request, { ...report, partitions: [one] });
    expect(answer.body).toMatchObject({
      topics: { orders: [{ offsets: [{ offset: 90, timestamp: 2_000, lag: 10 }] }] },
    });
  });
});

describe('the cluster and topic answers', () => {
  it('knows the cluster by its configured name, else its id, case-insensitive', () => {
    expect(clusterName('abc-123', 'local')).toBe('local');
    expect(clusterName('abc-123', undefined)).toBe('abc-123');
    expect(isCluster('ABC-123', 'abc-123')).toBe(true);
    expect(isCluster('Local', 'abc-123', 'local')).toBe(true);
    expect(isCluster('other', 'abc-123', 'local')).toBe(false);
  });

  it('wraps every answer with error, message and the request', () => {
    expect(clusterList(request, 'local')).toEqual({
      statusCode: 200,
      body: { error: false, message: 'cluster list returned', clusters: ['local'], request },
    });
    expect(notFound(request, 'cluster not found')).toEqual({
      statusCode: 404,
      body: { error: true, message: 'cluster not found', request },
    });
    expect(consumerList(request, ['search', 'billing']).body).toMatchObject({
      consumers: ['billing', 'search'],
    });
  });

  it("reads each topic's log end per partition and the groups reading it off the reports", () => {
    const other: GroupReport = {
      ...report,
      group: 'search',
      partitions: [partition({ partition: 1, logEnd: 150 }), partition({ topic: 'refunds' })],
    };
    const topics = topicsOf([report, other]);
    // Read a batch at a time and folded into one map: the same summary.
    expect(topicsOf([other], topicsOf([report]))).toEqual(topics);
    expect([...topics.keys()]).toEqual(['orders', 'refunds']);
    expect(topics.get('orders')).toEqual({
      ends: [100, 150],
      groups: new Set(['billing', 'search']),
    });
    expect(topicList(request, topics.keys()).body).toMatchObject({ topics: ['orders', 'refunds'] });
    expect(topicDetail(request, [100, 150]).body).toMatchObject({ offsets: [100, 150] });
    // A partition no report names reads 0.
    const onlyOne = topicsOf([
      { ...report, partitions: [partition({ partition: 1, logEnd: 150 })] },
    ]);
    expect(topicDetail(request, onlyOne.get('orders')?.ends ?? []).body).toMatchObject({
      offsets: [0, 150],
    });
    expect(topicConsumers(request, new Set(['search', 'billing'])).body).toMatchObject({
      consumers: ['billing', 'search'],
    });
  });

  describe('the consumer list by pages', () => {
    const ids = Array.from({ length: 50 }, (_, i) => `g-${String(49 - i).padStart(2, '0')}`);
    const bytes = (body: object) => Buffer.byteLength(JSON.stringify(JSON.stringify(body)));
    const link = (last: string) => `/next?after=${last}`;

    it("answers the whole list while it fits the budget, else 413 in Burrow's error body", () => {
      const whole = consumerList(request, ids);
      expect(whole.statusCode).toBe(200);
      const size = bytes(whole.body);
      expect(consumerList(request, ids, size).statusCode).toBe(200);
      const refused = consumerList(request, ids, size - 1);
      expect(refused.statusCode).toBe(413);
      expect(Object.keys(refused.body)).toEqual(['error', 'message', 'request']);
      expect(refused.body).toMatchObject({ error: true, request });
      expect((refused.body as { message: string }).message).toContain(
        `the consumer list of 50 groups would be ${size.toLocaleString('en-US')} bytes`,
      );
    });

    it("answers a topic's consumers whole while they fit the budget, else 413 in Burrow's error body", () => {
      const whole = topicConsumers(request, ids);
      expect(whole.statusCode).toBe(200);
      const size = bytes(whole.body);
      expect(topicConsumers(request, ids, size).statusCode).toBe(200);
      const refused = topicConsumers(request, ids, size - 1);
      expect(refused.statusCode).toBe(413);
      expect(Object.keys(refused.body)).toEqual(['error', 'message', 'request']);
      expect((refused.body as { message: string }).message).toContain(
        `the consumers of this topic, 50 groups, would be ${size.toLocaleString('en-US')} bytes`,
      );
      // 25,000 ids of 255 characters: over Lambda's 6,291,556 bytes at the default budget.
      const many = Array.from({ length: 25_000 }, (_, i) => `${i}-`.padEnd(255, 'g'));
      expect(topicConsumers(request, many).statusCode).toBe(413);
    });

    it("answers the whole topic list while it fits the budget, else 413 in Burrow's error body", () => {
      const topics = ids.map((id) => `t.${id}`);
      const whole = topicList(request, topics);
      expect(whole.statusCode).toBe(200);
      const size = bytes(whole.body);
      expect(topicList(request, topics, size).statusCode).toBe(200);
      const refused = topicList(request, topics, size - 1);
      expect(refused.statusCode).toBe(413);
      expect(Object.keys(refused.body)).toEqual(['error', 'message', 'request']);
      expect((refused.body as { message: string }).message).toMatch(
        new RegExp(`^the topic list of 50 topics would be ${size.toLocaleString('en-US')} bytes`),
      );
    });

    /** What the store reads for a page: `limit` + 1 ids after `after`, in the index's order. */
    const read = (after: string | undefined, limit: number) =>
      [...ids]
        .sort()
        .filter((id) => after === undefined || id > after)
        .slice(0, limit + 1);

    it('pages in order after the cursor, ending a page early by its bytes, every id once', () => {
      const budget = 400;
      const seen: string[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 50; pages++) {
        const page = consumerListPage(request, read(after, 30), 30, link, budget);
        expect(page.statusCode).toBe(200);
        expect(bytes(page.body)).toBeLessThanOrEqual(budget);
        const { consumers, next } = page.body as { consumers: string[]; next: string | null };
        expect(consumers.length).toBeGreaterThan(0);
        expect(consumers.length).toBeLessThan(30);
        seen.push(...consumers);
        if (next === null) break;
        expect(next).toBe(link(consumers.at(-1) as string));
        after = consumers.at(-1);
      }
      expect(seen).toEqual([...ids].sort());
      // Without a budget to speak of: pages of `limit`.
      const full = consumerListPage(request, read(undefined, 30), 30, link);
      expect((full.body as { consumers: string[] }).consumers).toHaveLength(30);
      // A cursor that is no group id (or longer than any the index can hold); one past the
      // last: an empty last page.
      for (const after of [{ at: 3 }, 'x'.repeat(1_019)]) {
        const bad = consumerCursor(request, after);
        expect(bad).toMatchObject({ statusCode: 400, body: { error: true, request } });
        expect((bad as { body: { message: string } }).body.message).toMatch(/^cursor: /);
      }
      expect(consumerCursor(request, 'x'.repeat(1_018))).toEqual({ after: 'x'.repeat(1_018) });
      expect(consumerListPage(request, read('h', 30), 30, link).body).toMatchObject({
        consumers: [],
        next: null,
      });
    });
  });
});
