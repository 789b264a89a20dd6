// GET /v3/clusters/{cluster_id}/consumer-groups/{group_id} — the Confluent REST v3 consumer
// group resource, with its consumers and lag summary inline, from the latest reconcile report.
import { maxLagPartition } from '../core/reconcile/offsets/burrow-answers.js';
import type { GroupReport } from '../core/reconcile/ports.js';
import { NotFoundError } from '../core/shared/errors.js';
import { httpHandler, json } from '../platform/http.js';
import { baseUrl, idParameter, pathParameter } from '../platform/http-event.js';
import { reconcileRuntime } from '../reconciling/runtime.js';

export const handler = httpHandler('read', async (event) => {
  const rt = await reconcileRuntime();
  const clusterId = pathParameter(event, 'cluster_id');
  const group = idParameter(event, 'group_id');
  const report = (await rt.reports.latestGroupReport(group)) as GroupReport | undefined;
  if (clusterId !== (await rt.source.clusterId()) || report === undefined) {
    throw new NotFoundError(`group_id: consumer group ${group} not found in cluster ${clusterId}`, {
      field: 'group_id',
    });
  }
  const self = `${baseUrl(event)}/v3/clusters/${clusterId}/consumer-groups/${group}`;
  const consumers = new Map<
    string,
    { consumer_id: string; client_id: string; assignments: object[] }
  >();
  for (const p of report.partitions) {
    if (p.owner === null) continue;
    const consumer = consumers.get(p.owner) ?? {
      consumer_id: p.owner,
      client_id: p.clientId ?? '',
      assignments: [],
    };
    consumer.assignments.push({ topic_name: p.topic, partition_id: p.partition });
    consumers.set(p.owner, consumer);
  }
  const worst = maxLagPartition(report);
  return json(200, {
    kind: 'KafkaConsumerGroup',
    metadata: { self, resource_name: `crn:///kafka=${clusterId}/consumer-group=${group}` },
    cluster_id: clusterId,
    consumer_group_id: group,
    is_simple: consumers.size === 0,
    state: report.state.toUpperCase(),
    consumers: [...consumers.values()],
    lag_summary: {
      max_lag: worst?.currentLag ?? 0,
      total_lag: report.totalLag,
      max_lag_consumer_id: worst?.owner ?? '',
      max_lag_client_id: worst?.clientId ?? '',
      max_lag_topic_name: worst?.topic ?? '',
      max_lag_partition_id: worst?.partition ?? 0,
    },
    tally: {
      status: report.status,
      anomalies: report.anomalies,
      max_time_lag_seconds: report.maxTimeLagSeconds,
    },
  });
});
