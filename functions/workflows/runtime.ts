import { createApprovalsStore } from '../adapters/dynamodb/approvals-store.js';
import { createClusterIdentity } from '../adapters/kafka/cluster-identity.js';
import { lazyAdmin } from '../adapters/kafka/lazy-admin.js';
import { createTaskTokens } from '../adapters/sfn/task-tokens.js';
import { createClients } from '../platform/clients.js';
import { loadWorkflowConfig, type WorkflowConfig } from '../platform/config.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';

// The composition root of the approval functions, built once per container.

async function build(config: WorkflowConfig) {
  const { documents, kafka } = await createClients(config, 'workflow');
  return {
    config,
    approvals: createApprovalsStore(documents, config.approvalsTable),
    tokens: createTaskTokens({ region: config.region, endpoint: config.stepFunctionsEndpoint }),
    clusterId: createClusterIdentity(lazyAdmin(kafka)),
  };
}

const config = loadWorkflowConfig();

export const workflowRuntime = lazyRuntime(() => build(config));
