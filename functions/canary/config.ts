import { ConfigurationError } from '../core/shared/errors.js';
import { type Env, integer, optional } from '../platform/config.js';

export interface CanaryEnvConfig {
  readonly topic: string;
  readonly stream: string;
  readonly recordsPerPartition: number;
  /** Partitions of the topic when the canary creates it (0: one per broker). */
  readonly partitions: number;
  /** Replicas of the topic when the canary creates it (0: three, or fewer brokers). */
  readonly replicationFactor: number;
}

const NAME = /^[a-zA-Z0-9._-]{1,249}$/;

/** The canary's own settings; Kafka, DynamoDB and the publish limits are publish's. */
export function loadCanaryConfig(env: Env = process.env): CanaryEnvConfig {
  const name = (variable: string, fallback: string) => {
    const value = optional(env, variable) ?? fallback;
    if (!NAME.test(value)) {
      throw new ConfigurationError(`${variable}: "${value}" is not a topic or stream name`, {
        field: variable,
      });
    }
    return value;
  };
  const topic = name('TALLY_CANARY_TOPIC', 'tally-canary');
  return {
    topic,
    stream: name('TALLY_CANARY_STREAM', topic),
    recordsPerPartition: integer(env, 'TALLY_CANARY_RECORDS_PER_PARTITION', 1, 1, 100),
    partitions: integer(env, 'TALLY_CANARY_PARTITIONS', 0, 0, 1000),
    replicationFactor: integer(env, 'TALLY_CANARY_REPLICATION_FACTOR', 0, 0, 5),
  };
}
