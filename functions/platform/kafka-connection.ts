import type { KafkaConnectionOptions } from '../adapters/kafka/client.js';
import { readScramCredentials } from '../adapters/secrets/scram-credentials.js';
import type { CommonConfig } from './config.js';

/**
 * Where Kafka is and how to sign in: the configured brokers, or MSK's bootstrap brokers for the
 * cluster ARN. SCRAM credentials are read here, once per container, from Secrets Manager, SSM
 * or the environment; they are handed to the Kafka client and to nothing else (never logged).
 * MSK's control-plane client is loaded only with a cluster ARN: with a broker list no function
 * pays for it at cold start.
 */
export async function kafkaConnection(
  config: Pick<CommonConfig, 'kafka' | 'region' | 'dynamodbTimeoutMs'>,
): Promise<KafkaConnectionOptions> {
  const { kafka } = config;
  const scram =
    kafka.scram &&
    (await readScramCredentials(kafka.scram, {
      region: config.region,
      // The same short budget as DynamoDB: an AWS API that does not answer becomes a 503.
      timeoutMs: config.dynamodbTimeoutMs,
    }));
  if (kafka.kind === 'brokers') {
    return {
      brokers: kafka.brokers,
      tls: kafka.tls,
      auth: scram ? { mechanism: 'scram-sha-512', ...scram } : { mechanism: 'none' },
    };
  }
  const [{ KafkaClient }, { createMskBootstrap }] = await Promise.all([
    import('@aws-sdk/client-kafka'),
    import('../adapters/msk/bootstrap.js'),
  ]);
  const bootstrap = createMskBootstrap({
    client: new KafkaClient({ region: config.region }),
    clusterArn: kafka.clusterArn,
    auth: kafka.auth,
    region: config.region,
    ...(scram && { scram }),
  });
  return bootstrap.resolve();
}
