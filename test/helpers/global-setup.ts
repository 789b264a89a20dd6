import type { TestProject } from 'vitest/node';
import { type LocalStack, startLocalStack } from '../../infra/local/stack.js';

let stack: LocalStack | undefined;

export async function setup(project: TestProject): Promise<void> {
  // The SDK warns that its 2027 releases will need Node 22; the pinned release runs on 20.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  stack = await startLocalStack({
    log: (line) => process.stderr.write(`[tally test stack] ${line}\n`),
    tablePrefix: 'tally-test-',
  });
  project.provide('kafkaBrokers', stack.kafkaBrokers);
  project.provide('kafkaClusterId', stack.kafkaClusterId);
  project.provide('dynamodbEndpoint', stack.dynamodbEndpoint);
}

export async function teardown(): Promise<void> {
  await stack?.stop();
}
