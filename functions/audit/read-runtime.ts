import { createAuditStore } from '../adapters/dynamodb/audit-store.js';
import { createClusterIdentity } from '../adapters/kafka/cluster-identity.js';
import { lazyAdmin } from '../adapters/kafka/lazy-admin.js';
import { loadAuditConfig } from '../platform/config.js';
import { dynamoDbClients } from '../platform/dynamodb-clients.js';
import { kafkaClient } from '../platform/kafka-client.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';

// The composition root of GET audit: stored reports and the cluster's identity; not the auditor,
// its log scanner or its metrics.

const config = loadAuditConfig();

export const auditReadRuntime = lazyRuntime(async () => ({
  store: createAuditStore(dynamoDbClients(config).documents, config.auditsTable),
  clusterId: createClusterIdentity(lazyAdmin(await kafkaClient(config, 'audit'))),
}));
