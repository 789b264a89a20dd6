import { sdkClientConfig } from '../adapters/aws/lazy-sdk-client.js';
import type { KafkaConnectionOptions } from '../adapters/kafka/client.js';
import type { CommonConfig } from './config.js';
import { tracing } from './tracing.js';

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
    // Loaded only with SCRAM configured: IAM and plaintext containers never pay for it.
    (await (
      await import('../adapters/secrets/scram-credentials.js')
    ).readScramCredentials(kafka.scram, {
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
    // Bounded like every SDK client on a request's path: a control plane that does not answer
    // fails the cold start's resolve with a 503, not a hang until Lambda's deadline.
    // Traced as every other SDK client is when TALLY_TRACING is on.
    client: tracing.captureClient(
      new KafkaClient(sdkClientConfig({ region: config.region, endpoint: undefined })),
    ),
    clusterArn: kafka.clusterArn,
    auth: kafka.auth,
    region: config.region,
    ...(scram && { scram }),
  });
  return bootstrap.resolve();
}
