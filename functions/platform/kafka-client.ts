import { createKafkaClient } from '../adapters/kafka/client.js';
import type { CommonConfig } from './config.js';
import { kafkaConnection } from './kafka-connection.js';
import { log } from './log.js';

// Apart from the DynamoDB clients: a function that never talks to Kafka must not load kafkajs.

/** The Kafka client of one container, for a composition root; it connects on first use. */
export async function kafkaClient(config: CommonConfig, role: string) {
  return createKafkaClient({
    clientId: `tally-${role}-${process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'local'}`,
    connection: await kafkaConnection(config),
    requestTimeoutMs: config.kafkaRequestTimeoutMs,
    log,
  });
}
