// GET /v3/clusters and GET /v3/clusters/{cluster_id} — the one cluster this API publishes to.
import { httpHandler, json } from '../platform/http.js';
import { baseUrl, pathParameter } from '../platform/http-event.js';
import { checkCluster } from '../publishing/checks.js';
import { clustersRuntime } from './clusters-runtime.js';

/**
 * The cluster as REST Proxy v3 describes one, with every link its ClusterData requires. Tally
 * serves none of these collections (the paths are REST Proxy's; here they answer 404): they are
 * there so clients generated from Confluent's document read the answer (docs/api.md).
 */
function cluster(base: string, clusterId: string) {
  const self = `${base}/v3/clusters/${clusterId}`;
  const related = (path: string) => ({ related: `${self}/${path}` });
  return {
    kind: 'KafkaCluster',
    metadata: { self, resource_name: `crn:///kafka=${clusterId}` },
    cluster_id: clusterId,
    acls: related('acls'),
    brokers: related('brokers'),
    broker_configs: related('broker-configs'),
    consumer_groups: related('consumer-groups'),
    topics: related('topics'),
    partition_reassignments: related('topics/-/partitions/-/reassignment'),
  };
}

export const handler = httpHandler('read', async (event) => {
  const rt = await clustersRuntime();
  const clusterId = await rt.catalog.clusterId();
  const base = baseUrl(event);
  if (event.pathParameters?.cluster_id === undefined) {
    return json(200, {
      kind: 'KafkaClusterList',
      metadata: { self: `${base}/v3/clusters`, next: null },
      data: [cluster(base, clusterId)],
    });
  }
  await checkCluster(rt, pathParameter(event, 'cluster_id'));
  return json(200, cluster(base, clusterId));
});
