// GET /v3/clusters and GET /v3/clusters/{cluster_id} — the one cluster this API publishes to.
import { httpHandler, json } from '../platform/http.js';
import { baseUrl, pathParameter } from '../platform/http-event.js';
import { checkCluster } from '../publishing/checks.js';
import { clustersRuntime } from './clusters-runtime.js';

function cluster(base: string, clusterId: string) {
  const self = `${base}/v3/clusters/${clusterId}`;
  return {
    kind: 'KafkaCluster',
    metadata: { self, resource_name: `crn:///kafka=${clusterId}` },
    cluster_id: clusterId,
    topics: { related: `${self}/topics` },
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
