import { Kafka, type KafkaConfig, type logCreator, logLevel, type SASLOptions } from 'kafkajs';

/** How to reach the cluster; built from KAFKA_BROKERS or from MSK's control plane. */
export interface KafkaConnectionOptions {
  readonly brokers: readonly string[];
  readonly tls: boolean;
  readonly auth:
    | { readonly mechanism: 'none' }
    | {
        readonly mechanism: 'iam';
        token(): Promise<{ readonly value: string; readonly lifetimeMs: number }>;
      }
    | { readonly mechanism: 'scram-sha-512'; readonly username: string; readonly password: string };
}

export interface KafkaClientOptions {
  readonly clientId: string;
  readonly connection: KafkaConnectionOptions;
  /** Per-request timeout on the wire; sends are also bounded by each request's deadline. */
  readonly requestTimeoutMs: number;
  readonly log: (level: 'error' | 'warn' | 'info', message: string, extra: object) => void;
}

function sasl(auth: KafkaConnectionOptions['auth']): SASLOptions | undefined {
  switch (auth.mechanism) {
    case 'none':
      return undefined;
    case 'scram-sha-512':
      return { mechanism: 'scram-sha-512', username: auth.username, password: auth.password };
    case 'iam':
      return {
        mechanism: 'oauthbearer',
        oauthBearerProvider: async () => ({ value: (await auth.token()).value }),
      };
  }
}

/**
 * kafkajs logs retried, expected broker answers at ERROR; route its log through ours at WARN and
 * above, without record contents (it never logs them).
 */
function logCreatorFor(log: KafkaClientOptions['log']): logCreator {
  return () =>
    ({ level, log: entry }) => {
      const { message, ...extra } = entry;
      if (level === logLevel.ERROR) log('warn', `kafkajs: ${message}`, extra);
      else if (level === logLevel.WARN) log('warn', `kafkajs: ${message}`, extra);
    };
}

export function createKafkaClient(options: KafkaClientOptions): Kafka {
  const config: KafkaConfig = {
    clientId: options.clientId,
    brokers: [...options.connection.brokers],
    ssl: options.connection.tls,
    connectionTimeout: 3000,
    requestTimeout: options.requestTimeoutMs,
    logLevel: logLevel.WARN,
    logCreator: logCreatorFor(options.log),
  };
  const mechanism = sasl(options.connection.auth);
  return new Kafka(mechanism ? { ...config, sasl: mechanism } : config);
}

/** What a kafkajs error means, where its name alone does not say it. */
const MEANINGS: Readonly<Record<string, string>> = {
  // Tally's own (core/shared/deadline.ts): the request's deadline came before Kafka's answer.
  DeadlineExceeded: 'no answer in time',
  KafkaJSSASLAuthenticationError: 'Kafka refused the SASL credentials',
  // kafkajs drops FindCoordinator's own error (an authorization failure among them) for this one.
  KafkaJSGroupCoordinatorNotFound:
    'no coordinator answered for it, or this principal may not describe it',
};

/**
 * A Kafka failure in a few words for messages: the error's name, and what it means when that is
 * not plain (a refused sign-in reads like any other failure otherwise). Never the credentials.
 */
export function kafkaFailure(error: unknown): string {
  const name = error instanceof Error ? error.name : 'unknown error';
  const meaning = MEANINGS[name];
  return meaning ? `${name}: ${meaning}` : name;
}
