import { KafkaClient } from '@aws-sdk/client-kafka';
import type { KafkaConnectionOptions } from '../adapters/kafka/client.js';
import { createMskBootstrap } from '../adapters/msk/bootstrap.js';
import type { KafkaSource } from './config.js';

/** Where Kafka is: the configured brokers, or MSK's bootstrap brokers for the cluster ARN. */
export async function kafkaConnection(config: {
  readonly kafka: KafkaSource;
  readonly region: string;
}): Promise<KafkaConnectionOptions> {
  if (config.kafka.kind === 'brokers') {
    return { brokers: config.kafka.brokers, tls: false, auth: { mechanism: 'none' } };
  }
  const bootstrap = createMskBootstrap({
    client: new KafkaClient({ region: config.region }),
    clusterArn: config.kafka.clusterArn,
    auth: config.kafka.auth,
    region: config.region,
    ...(config.kafka.scram && { scram: config.kafka.scram }),
  });
  return bootstrap.resolve();
}
