// Burrow's read API (its httpserver/kafka.go routes) from the latest reconcile reports, so Burrow
// dashboards and exporters work against Tally: /burrow/admin, /v3/kafka, /v3/kafka/{cluster},
// …/consumer, …/consumer/{group}, …/status, …/lag, …/topic, …/topic/{topic}, …/consumers; and
// its read-only /v3/config tree and GET /v3/admin/loglevel from Tally's settings. The consumer
// list is whole, as Burrow answers it, while it fits Lambda's 6 MB response; past that 413 naming
// `?limit=&cursor=`, by which it comes in pages with a `next` link (Tally's extension), each page
// one page of the index read. The topic routes read the topic index (adapters/dynamodb/
// topic-index.ts), and one topic's routes only its readers' reports, however many groups there are.
import {
  type BurrowRequest,
  burrowError,
  CONSUMER_PAGES,
  clusterDetail,
  clusterList,
  clusterName,
  consumerCursor,
  consumerDetail,
  consumerList,
  consumerListPage,
  consumerStatus,
  isCluster,
  notFound,
  topicConsumers,
  topicDetail,
  topicList,
  topicsOf,
} from '../core/reconcile/offsets/burrow-answers.js';
import { configAnswer, logLevel } from '../core/reconcile/offsets/burrow-config.js';
import type { GroupReport } from '../core/reconcile/ports.js';
import { InvalidInputError } from '../core/shared/errors.js';
import { encodeCursor, type PageRequest } from '../core/shared/pages.js';
import { httpHandler, json } from '../platform/http.js';
import type { HttpEvent } from '../platform/http-event.js';
import { nextLink, pageRequest } from '../platform/http-pages.js';
import { logger } from '../platform/log.js';
import { reconcileRuntime } from '../reconciling/runtime.js';

/** Latest reports read at once by a topic's route. */
const READ_BATCH = 32;

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

const text = (body: string) => ({
  statusCode: 200,
  headers: { 'content-type': 'text/plain' },
  body,
});

/** Burrow's message for a path under a cluster it does not have (its kafka.go handlers). */
function unknownCluster(kind?: string, item?: string, sub?: string): string {
  if (kind === undefined) return 'cluster module not found';
  if (kind === 'consumer' && item) return 'cluster or consumer not found';
  if (kind === 'topic' && item && sub === undefined) return 'cluster or topic not found';
  return 'cluster not found';
}

/**
 * `?limit=&cursor=` of the consumer list (Tally's extension; Burrow has no pages): a page and its
 * `next` link, reading `limit` + 1 ids of the index after the cursor's; a bad limit or cursor as
 * Burrow's error body (400) naming it.
 */
async function consumerPage(
  event: HttpEvent,
  path: string,
  request: BurrowRequest,
  after: (id: string | undefined, limit: number) => Promise<string[]>,
) {
  let page: PageRequest;
  try {
    page = pageRequest(event, CONSUMER_PAGES);
  } catch (error) {
    if (error instanceof InvalidInputError) return burrowError(request, 400, error.message);
    throw error;
  }
  const cursor = consumerCursor(request, page.after);
  if ('statusCode' in cursor) return cursor;
  const link = (last: string) => nextLink(event, path, encodeCursor(last), page.limit) as string;
  return consumerListPage(request, await after(cursor.after, page.limit + 1), page.limit, link);
}

export const handler = httpHandler('read', async (event) => {
  const path = event.rawPath.replace(/\/+$/, '');
  if (path === '/burrow/admin') return text('GOOD');
  const rt = await reconcileRuntime();
  const request = { url: event.rawPath, host: event.requestContext?.domainName ?? '' };
  const id = await rt.source.clusterId();
  const configured = rt.config.burrowClusterName;
  const name = clusterName(id, configured);
  const answer = (a: { statusCode: number; body: object }) => json(a.statusCode, a.body);
  const isThis = (cluster: string) => isCluster(cluster, id, configured);
  const servers =
    rt.config.kafka.kind === 'brokers' ? rt.config.kafka.brokers : [rt.config.kafka.clusterArn];
  if (path === '/v3/admin/loglevel' || path === '/v3/config' || path.startsWith('/v3/config/')) {
    const settings = {
      cluster: name,
      servers,
      intervals: rt.config.windowSize,
      expireGroupSeconds: Math.round(rt.config.retentionMs / 1000),
      logLevel: logger.getLevelName(),
    };
    if (path === '/v3/admin/loglevel') return answer(logLevel(request, settings));
    const segments = path.split('/').slice(3).map(decodeSegment);
    if (segments.some((s) => s === undefined || s === '')) {
      return answer(notFound(request, 'invalid request type'));
    }
    return answer(configAnswer(request, segments as string[], settings, isThis));
  }
  // After /v3/kafka. A segment that is empty (`consumer//status`) or not valid percent-encoding
  // names nothing there is: Burrow's 404, never a look-up with an empty or mangled key.
  const parts = path.split('/').slice(3).map(decodeSegment);
  if (parts.length === 0) return answer(clusterList(request, name));
  if (parts.some((part) => part === undefined || part === '')) {
    return answer(notFound(request, 'cluster or consumer not found'));
  }
  const [cluster = '', kind, item, sub] = parts as string[];
  const statusOf = kind === 'consumer' && item !== undefined && (sub === 'status' || sub === 'lag');
  if (!isThis(cluster)) {
    // Burrow's evaluator answers a cluster its storage does not have as an unknown group: 404
    // with the NOTFOUND status object (`error: false`), not an error body.
    if (statusOf) return answer(consumerStatus(request, cluster, item, undefined, sub === 'lag'));
    return answer(notFound(request, unknownCluster(kind, item, sub)));
  }
  const latest = async (group: string) =>
    (await rt.reports.latestGroupReport(group)) as GroupReport | undefined;
  /** What the reports of `topic`'s readers say of it (undefined: no group reads it). */
  const topicOf = async (topic: string, groups: readonly string[]) => {
    const reports: GroupReport[] = [];
    for (let i = 0; i < groups.length; i += READ_BATCH) {
      const read = await Promise.all(groups.slice(i, i + READ_BATCH).map(latest));
      reports.push(...read.filter((r): r is GroupReport => r !== undefined));
    }
    return topicsOf(reports).get(topic);
  };

  if (kind === undefined) {
    return answer(clusterDetail(request, servers));
  }
  if (kind === 'consumer') {
    if (item === undefined) {
      const query = event.queryStringParameters ?? {};
      if (query.limit === undefined && query.cursor === undefined)
        return answer(consumerList(request, [...(await rt.reports.reportedGroups()).keys()]));
      const after = (id: string | undefined, n: number) => rt.reports.reportedGroupsAfter(id, n);
      return answer(await consumerPage(event, path, request, after));
    }
    const report = await latest(item);
    if (statusOf) {
      return answer(consumerStatus(request, cluster, item, report, sub === 'lag'));
    }
    if (report === undefined) return answer(notFound(request, 'cluster or consumer not found'));
    return answer(consumerDetail(request, report));
  }
  // Before the first reconcile run after the upgrade that brought the topic index, it is empty:
  // the list is empty and every topic 404 until that run writes it (docs/limits.md).
  if (item === undefined) return answer(topicList(request, await rt.reports.reportedTopics()));
  const readers = await rt.reports.topicGroups(item);
  if (sub === 'consumers') {
    if (readers.length === 0) return answer(notFound(request, 'cluster not found'));
    return answer(topicConsumers(request, readers));
  }
  const topic = readers.length === 0 ? undefined : await topicOf(item, readers);
  if (topic === undefined) return answer(notFound(request, 'cluster or topic not found'));
  return answer(topicDetail(request, topic.ends));
});
