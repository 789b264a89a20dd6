import { createApprovalsStore } from '../adapters/dynamodb/approvals-store.js';
import { createClusterIdentity } from '../adapters/kafka/cluster-identity.js';
import { lazyAdmin } from '../adapters/kafka/lazy-admin.js';
import { createTaskTokens } from '../adapters/sfn/task-tokens.js';
import { loadWorkflowConfig, type WorkflowConfig } from '../platform/config.js';
import { dynamoDbClients } from '../platform/dynamodb-clients.js';
import { kafkaClient } from '../platform/kafka-client.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';
import { tracing } from '../platform/tracing.js';

// The composition root of the approval functions, built once per container.

async function build(config: WorkflowConfig) {
  const { documents } = dynamoDbClients(config);
  const kafka = await kafkaClient(config, 'workflow');
  return {
    config,
    approvals: createApprovalsStore(documents, config.approvalsTable),
    tokens: createTaskTokens({
      region: config.region,
      endpoint: config.stepFunctionsEndpoint,
      captureClient: tracing.captureClient,
    }),
    clusterId: createClusterIdentity(lazyAdmin(kafka)),
  };
}

const config = loadWorkflowConfig();

export const workflowRuntime = lazyRuntime(() => build(config));
