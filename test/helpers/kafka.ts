import { Kafka, logLevel } from 'kafkajs';
import { inject } from 'vitest';

/**
 * A kafkajs client for the test stack's broker. kafkajs logs retried, expected broker answers
 * at ERROR level; failures surface as rejected promises, so its log stays off.
 */
export function testKafka(clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers: inject('kafkaBrokers').split(','),
    logLevel: logLevel.NOTHING,
  });
}
