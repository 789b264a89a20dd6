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

export function consumerList(request: BurrowRequest, groups: readonly string[]): BurrowAnswer {
  return ok(request, 'consumer list returned', { consumers: [...groups].sort() });
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

/** What the reports say of the cluster's topics: log end per partition, groups reading each. */
export function topicsOf(reports: readonly GroupReport[]) {
  const topics = new Map<string, { ends: number[]; groups: Set<string> }>();
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

export function topicList(request: BurrowRequest, topics: Iterable<string>): BurrowAnswer {
  return ok(request, 'topic list returned', { topics: [...topics].sort() });
}

export function topicDetail(request: BurrowRequest, ends: readonly number[]): BurrowAnswer {
  return ok(request, 'topic offsets returned', { offsets: Array.from(ends, (e) => e ?? 0) });
}

export function topicConsumers(request: BurrowRequest, groups: Iterable<string>): BurrowAnswer {
  return ok(request, 'consumers of topic returned', { consumers: [...groups].sort() });
}
