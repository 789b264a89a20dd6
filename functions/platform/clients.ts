import { createDynamoDbClients } from '../adapters/dynamodb/client.js';
import { createKafkaClient } from '../adapters/kafka/client.js';
import type { CommonConfig } from './config.js';
import { kafkaConnection } from './kafka-connection.js';
import { log } from './log.js';

/** The DynamoDB and Kafka clients of one container, for a composition root. */
export async function createClients(config: CommonConfig, role: string) {
  const dynamodb = createDynamoDbClients({
    endpoint: config.dynamodbEndpoint,
    region: config.region,
    timeoutMs: config.dynamodbTimeoutMs,
  });
  const kafka = createKafkaClient({
    clientId: `tally-${role}-${process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'local'}`,
    connection: await kafkaConnection(config),
    requestTimeoutMs: config.kafkaRequestTimeoutMs,
    log,
  });
  return { ...dynamodb, kafka };
}
