import { LAMBDA_RESPONSE_LIMIT_BYTES } from '../../rest-proxy/answer-bound.js';
import type { GroupReport, PartitionReport } from '../ports.js';

// Burrow's HTTP JSON shapes (v3 API), so existing Burrow dashboards read Tally's reports.
// Tally's extra partition statuses (LOST, OUT_OF_RANGE) appear as partition statuses.

function offsetOf(observation: PartitionReport['start']) {
  if (observation === null) return null;
  return {
    offset: observation.committed ?? -1,
    timestamp: observation.observedAt,
    lag:
      observation.committed === null ? 0 : Math.max(0, observation.logEnd - observation.committed),
  };
}

function partitionOf(p: PartitionReport) {
  return {
    topic: p.topic,
    partition: p.partition,
    owner: p.owner ?? '',
    client_id: p.clientId ?? '',
    status: p.status,
    start: offsetOf(p.start),
    end: offsetOf(p.end),
    current_lag: p.currentLag ?? 0,
    complete: p.complete,
    time_lag_seconds: p.timeLagSeconds,
  };
}

/** The partition furthest behind (by offset lag), as Burrow's `maxlag` and Confluent's summary. */
export function maxLagPartition(report: GroupReport): PartitionReport | undefined {
  return [...report.partitions].sort((a, b) => (b.currentLag ?? 0) - (a.currentLag ?? 0))[0];
}

/** Burrow's `status` object; `all` false keeps only partitions that are not OK (as /status). */
export function burrowStatus(cluster: string, report: GroupReport, all: boolean) {
  const partitions = report.partitions.map(partitionOf);
  const worst = maxLagPartition(report);
  return {
    cluster,
    group: report.group,
    status: report.status,
    complete: report.complete,
    partitions: all ? partitions : partitions.filter((p) => p.status !== 'OK'),
    partition_count: report.partitionCount,
    maxlag: worst ? partitionOf(worst) : null,
    totallag: report.totalLag,
  };
}

// The rest of Burrow's read API (its httpserver/kafka.go): every answer carries `error`,
// `message` and `request` {url, host}; a missing cluster, group or topic answers 404 with
// `error: true` and Burrow's message; an unknown group's /status and /lag answer 404 with the
// NOTFOUND status object, as Burrow's evaluator does.

export interface BurrowRequest {
  readonly url: string;
  readonly host: string;
}

export interface BurrowAnswer {
  readonly statusCode: number;
  readonly body: object;
}

const ok = (request: BurrowRequest, message: string, fields: object): BurrowAnswer => ({
  statusCode: 200,
  body: { error: false, message, ...fields, request },
});

export const notFound = (request: BurrowRequest, message: string): BurrowAnswer => ({
  statusCode: 404,
  body: { error: true, message, request },
});

/** The name a Burrow client knows the cluster by: the configured one, else Kafka's id. */
export function clusterName(clusterId: string, configured: string | undefined): string {
  return configured ?? clusterId;
}

/** Whether `requested` names this cluster: its id or configured name, case-insensitive. */
export function isCluster(requested: string, clusterId: string, configured?: string): boolean {
  const wanted = requested.toLowerCase();
  return wanted === clusterId.toLowerCase() || wanted === configured?.toLowerCase();
}

export function clusterList(request: BurrowRequest, name: string): BurrowAnswer {
  return ok(request, 'cluster list returned', { clusters: [name] });
}

/** Burrow's client profile of the cluster and consumer modules: Tally's own client. */
export function clientProfile() {
  return { name: 'tally', 'client-id': 'tally', 'kafka-version': '', tls: null, sasl: null };
}

export function clusterDetail(request: BurrowRequest, servers: readonly string[]): BurrowAnswer {
  return ok(request, 'cluster module detail returned', {
    module: {
      'class-name': 'kafka',
      servers,
      'client-profile': clientProfile(),
      'topic-refresh': 0,
      'offset-refresh': 0,
    },
  });
}

/**
 * Pages of the consumer list (Tally's extension: Burrow answers it whole): `limit` groups
 * (default 10,000, at most 20,000: 5.2 MB at 255 characters each) after the cursor's group.
 */
export const CONSUMER_PAGES = { defaultLimit: 10_000, maxLimit: 20_000 } as const;

/**
 * The most bytes a consumer list may take in the function's result: Lambda's response limit
 * (6,291,556 bytes; the body is JSON inside the result, so a `"` takes two bytes) less 64 KiB
 * for the status, headers and what the runtime adds.
 */
export const CONSUMER_LIST_BYTES = LAMBDA_RESPONSE_LIMIT_BYTES - 64 * 1024;

/** Bytes a body takes in the function's result: its JSON, as a JSON string. */
const resultBytes = (body: object) => Buffer.byteLength(JSON.stringify(JSON.stringify(body)));
/** Bytes one group id adds to the list in the result (its quotes escaped, and a comma). */
const idBytes = (id: string) => Buffer.byteLength(JSON.stringify(JSON.stringify(id))) - 1;
const fmt = (n: number) => n.toLocaleString('en-US');

/** A refusal in Burrow's error shape (`writeErrorResponse`): `error`, `message`, `request`. */
export const burrowError = (
  request: BurrowRequest,
  statusCode: number,
  message: string,
): BurrowAnswer => ({ statusCode, body: { error: true, message, request } });

/**
 * Burrow's consumer list, whole, as Burrow answers it, while it fits Lambda's response
 * (`budget`); past that 413 in Burrow's error shape naming the limit and the query that pages it.
 */
export function consumerList(
  request: BurrowRequest,
  groups: readonly string[],
  budget = CONSUMER_LIST_BYTES,
): BurrowAnswer {
  const answer = ok(request, 'consumer list returned', { consumers: [...groups].sort() });
  const bytes = resultBytes(answer.body);
  if (bytes <= budget) return answer;
  return burrowError(
    request,
    413,
    `the consumer list of ${fmt(groups.length)} groups would be ${fmt(bytes)} bytes, over Lambda's response limit of ${fmt(LAMBDA_RESPONSE_LIMIT_BYTES)} bytes: read it by pages with ?limit=&cursor= (limit 1 to ${fmt(CONSUMER_PAGES.maxLimit)}, default ${fmt(CONSUMER_PAGES.defaultLimit)}; no cursor for the first page, then the \`next\` link of each page)`,
  );
}

/**
 * The longest group id a cursor may hold in bytes: the index's sort key (`group#<id>`) is at
 * most DynamoDB's 1,024 bytes, so no reported group has a longer one.
 */
const CURSOR_ID_BYTES = 1_024 - 'group#'.length;

/**
 * The group id a consumer-list cursor holds (undefined: the first page), or the 400 in Burrow's
 * error body naming `cursor` when it holds no group id.
 */
export function consumerCursor(
  request: BurrowRequest,
  after: unknown,
): { readonly after: string | undefined } | BurrowAnswer {
  if (after === undefined) return { after };
  if (typeof after === 'string' && Buffer.byteLength(after) <= CURSOR_ID_BYTES) return { after };
  return burrowError(
    request,
    400,
    'cursor: not a cursor of the consumer list; pass the one in the `next` link of the page before unchanged',
  );
}

/**
 * One page of the consumer list (Tally's extension): of `ids`, the group ids after the cursor
 * in the index's order as the store read them (at most `limit` + 1: the one past the page says
 * there is a next), the first `limit`, ending earlier where the next id would take the answer
 * past `budget`; and `next`, the link to the page after (`link(last id)`), or null on the last.
 */
export function consumerListPage(
  request: BurrowRequest,
  ids: readonly string[],
  limit: number,
  link: (lastId: string) => string,
  budget = CONSUMER_LIST_BYTES,
): BurrowAnswer {
  // What the answer takes besides its ids, with the longest next link it could carry.
  const longestLink = link('x'.repeat(Math.max(0, ...ids.map((g) => g.length)) * 4));
  let bytes = resultBytes({
    ...ok(request, 'consumer list returned', {}).body,
    consumers: [],
    next: longestLink,
  });
  let end = 0;
  while (end < ids.length && end < limit) {
    const more = idBytes(ids[end] as string);
    if (bytes + more > budget && end > 0) break;
    bytes += more;
    end++;
  }
  const consumers = ids.slice(0, end);
  const last = consumers.at(-1);
  const next = end < ids.length && last !== undefined ? link(last) : null;
  return ok(request, 'consumer list returned', { consumers, next });
}

/**
 * Burrow's consumer detail: topic → partitions (by number) with their offsets ring, owner,
 * client id and current lag. Tally's ring is its window; the report keeps its oldest and newest
 * readings, so `offsets` holds those two (one when they are the same reading).
 */
export function consumerDetail(request: BurrowRequest, report: GroupReport): BurrowAnswer {
  const topics: Record<string, object[]> = {};
  for (const p of report.partitions) {
    const partitions = topics[p.topic] ?? [];
    topics[p.topic] = partitions;
    const readings = [p.start, p.end].filter(
      (o, i, all) => o !== null && (i === 0 || o.observedAt !== all[0]?.observedAt),
    );
    partitions[p.partition] = {
      offsets: readings.map(offsetOf),
      owner: p.owner ?? '',
      client_id: p.clientId ?? '',
      'current-lag': p.currentLag ?? 0,
    };
  }
  return ok(request, 'consumer detail returned', { topics });
}

/** /status (not-OK partitions) and /lag (all): Burrow's status object, 404 NOTFOUND when unknown. */
export function consumerStatus(
  request: BurrowRequest,
  cluster: string,
  group: string,
  report: GroupReport | undefined,
  all: boolean,
): BurrowAnswer {
  if (report === undefined) {
    return {
      statusCode: 404,
      body: {
        error: false,
        message: 'consumer status returned',
        status: {
          cluster,
          group,
          status: 'NOTFOUND',
          complete: 1,
          partitions: [],
          partition_count: 0,
          maxlag: null,
          totallag: 0,
        },
        request,
      },
    };
  }
  return ok(request, 'consumer status returned', { status: burrowStatus(cluster, report, all) });
}

/** Per topic: the log end per partition and the groups reading it. */
export type TopicsSeen = Map<string, { ends: number[]; groups: Set<string> }>;

/**
 * What the reports say of the cluster's topics: log end per partition, groups reading each,
 * added to `topics` (so reports read a batch at a time fold into one map).
 */
export function topicsOf(reports: readonly GroupReport[], topics: TopicsSeen = new Map()) {
  for (const report of reports) {
    for (const p of report.partitions) {
      const topic = topics.get(p.topic) ?? { ends: [], groups: new Set<string>() };
      topic.ends[p.partition] = Math.max(topic.ends[p.partition] ?? 0, p.logEnd);
      topic.groups.add(report.group);
      topics.set(p.topic, topic);
    }
  }
  return topics;
}

/**
 * Burrow's topic list, whole, while it fits Lambda's response (`budget`, as the consumer list);
 * past that (some 25,000 topics of 249 characters) 413 in Burrow's error shape.
 */
export function topicList(
  request: BurrowRequest,
  topics: Iterable<string>,
  budget = CONSUMER_LIST_BYTES,
): BurrowAnswer {
  const sorted = [...topics].sort();
  const answer = ok(request, 'topic list returned', { topics: sorted });
  const bytes = resultBytes(answer.body);
  if (bytes <= budget) return answer;
  return burrowError(
    request,
    413,
    `the topic list of ${fmt(sorted.length)} topics would be ${fmt(bytes)} bytes, over Lambda's response limit of ${fmt(LAMBDA_RESPONSE_LIMIT_BYTES)} bytes; it has no pages: read a topic's consumers by /v3/kafka/{cluster}/topic/{topic}/consumers, or a group's topics by /v3/kafka/{cluster}/consumer/{group}`,
  );
}

export function topicDetail(request: BurrowRequest, ends: readonly number[]): BurrowAnswer {
  return ok(request, 'topic offsets returned', { offsets: Array.from(ends, (e) => e ?? 0) });
}

/**
 * The groups reading a topic, whole, while they fit Lambda's response (`budget`, as the consumer
 * list); past that (some 24,000 ids of 255 characters) 413 in Burrow's error shape.
 */
export function topicConsumers(
  request: BurrowRequest,
  groups: Iterable<string>,
  budget = CONSUMER_LIST_BYTES,
): BurrowAnswer {
  const sorted = [...groups].sort();
  const answer = ok(request, 'consumers of topic returned', { consumers: sorted });
  const bytes = resultBytes(answer.body);
  if (bytes <= budget) return answer;
  return burrowError(
    request,
    413,
    `the consumers of this topic, ${fmt(sorted.length)} groups, would be ${fmt(bytes)} bytes, over Lambda's response limit of ${fmt(LAMBDA_RESPONSE_LIMIT_BYTES)} bytes; it has no pages: read the consumer list by pages (/v3/kafka/{cluster}/consumer?limit=&cursor=) and each group's topics by /v3/kafka/{cluster}/consumer/{group}`,
  );
}
