import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../functions/core/shared/errors.js';
import { loadPublishConfig } from '../../../functions/platform/config.js';

type Env = Record<string, string | undefined>;

const TABLES: Env = {
  TALLY_STREAMS_TABLE: 'tally-streams',
  TALLY_LEDGER_TABLE: 'tally-ledger',
  TALLY_RESERVATIONS_TABLE: 'tally-reservations',
};

const BROKERS: Env = { ...TABLES, KAFKA_BROKERS: 'localhost:9092' };

const MSK: Env = {
  ...TABLES,
  MSK_CLUSTER_ARN: 'arn:aws:kafka:us-east-1:000000000000:cluster/tally/abc-1',
};

/** The ConfigurationError that loading `env` throws; fails the test when it does not throw. */
function configError(env: Env): ConfigurationError {
  try {
    loadPublishConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error('loadPublishConfig accepted the environment');
}

describe('loadPublishConfig: tables', () => {
  it.each(Object.keys(TABLES))('%s missing fails, naming it', (name) => {
    const error = configError({ ...BROKERS, [name]: undefined });

    expect(error.message).toContain(name);
    expect(error.field).toBe(name);
    expect(error.status).toBe(500);
  });

  it.each(['', '   '])('a blank table name (%j) counts as missing', (blank) => {
    const error = configError({ ...BROKERS, TALLY_LEDGER_TABLE: blank });

    expect(error.message).toContain('TALLY_LEDGER_TABLE');
  });

  it('reads the table names, trimmed', () => {
    const config = loadPublishConfig({ ...BROKERS, TALLY_STREAMS_TABLE: '  streams-x ' });

    expect(config.tables).toEqual({
      streams: 'streams-x',
      ledger: 'tally-ledger',
      reservations: 'tally-reservations',
    });
  });
});

describe('loadPublishConfig: where Kafka is', () => {
  it('reads KAFKA_BROKERS as a trimmed list', () => {
    const config = loadPublishConfig({
      ...TABLES,
      KAFKA_BROKERS: ' b-1.kafka.local:9092, b-2.kafka.local:9094 ,',
    });

    expect(config.kafka).toEqual({
      kind: 'brokers',
      brokers: ['b-1.kafka.local:9092', 'b-2.kafka.local:9094'],
      auth: 'plaintext',
      tls: false,
      scram: undefined,
    });
  });

  it('reads SCRAM over TLS for KAFKA_BROKERS from a Secrets Manager secret', () => {
    const config = loadPublishConfig({
      ...TABLES,
      KAFKA_BROKERS: 'kafka.local:9096',
      KAFKA_AUTH: 'scram',
      KAFKA_TLS: 'true',
      KAFKA_SASL_SECRET_ID: 'AmazonMSK_tally',
    });

    expect(config.kafka).toEqual({
      kind: 'brokers',
      brokers: ['kafka.local:9096'],
      auth: 'scram',
      tls: true,
      scram: { from: 'secrets-manager', secretId: 'AmazonMSK_tally' },
    });
  });

  it.each(['iam', 'tls', 'bogus'])('refuses KAFKA_AUTH=%s with KAFKA_BROKERS', (auth) => {
    const error = configError({ ...TABLES, KAFKA_BROKERS: 'kafka.local:9092', KAFKA_AUTH: auth });

    expect(error.field).toBe('KAFKA_AUTH');
    expect(error.message).toContain(auth);
  });

  it('refuses KAFKA_TLS other than true or false', () => {
    const error = configError({ ...TABLES, KAFKA_BROKERS: 'kafka.local:9092', KAFKA_TLS: 'yes' });

    expect(error.field).toBe('KAFKA_TLS');
  });

  it('refuses KAFKA_BROKERS and MSK_CLUSTER_ARN together', () => {
    const error = configError({ ...MSK, KAFKA_BROKERS: 'localhost:9092' });

    expect(error.message).toContain('KAFKA_BROKERS');
    expect(error.message).toContain('MSK_CLUSTER_ARN');
  });

  it.each([{}, { KAFKA_BROKERS: '' }, { KAFKA_BROKERS: ' , ' }])(
    'requires one of them (%o), naming KAFKA_BROKERS',
    (kafka) => {
      const error = configError({ ...TABLES, ...kafka });

      expect(error.message).toContain('KAFKA_BROKERS');
      expect(error.field).toBe('KAFKA_BROKERS');
    },
  );

  it.each([
    'localhost',
    'localhost:',
    'localhost:port',
    ':9092',
    'kafka.local:9092:1',
    'kafka local:9092',
  ])('refuses the broker %j (not host:port)', (broker) => {
    const error = configError({ ...TABLES, KAFKA_BROKERS: `localhost:9092,${broker}` });

    expect(error.message).toContain('KAFKA_BROKERS');
    expect(error.message).toContain(broker);
  });

  it('defaults MSK auth to iam, without SCRAM credentials', () => {
    const config = loadPublishConfig(MSK);

    expect(config.kafka).toEqual({
      kind: 'msk',
      clusterArn: MSK.MSK_CLUSTER_ARN,
      auth: 'iam',
      scram: undefined,
    });
  });

  it.each(['iam', 'tls', 'plaintext'] as const)('accepts KAFKA_AUTH=%s', (auth) => {
    const config = loadPublishConfig({ ...MSK, KAFKA_AUTH: auth });

    expect(config.kafka).toMatchObject({ kind: 'msk', auth, scram: undefined });
  });

  it('reads SCRAM credentials for KAFKA_AUTH=scram', () => {
    const config = loadPublishConfig({
      ...MSK,
      KAFKA_AUTH: 'scram',
      KAFKA_SASL_USERNAME: 'tally',
      KAFKA_SASL_PASSWORD: 's3cret',
    });

    expect(config.kafka).toMatchObject({
      kind: 'msk',
      auth: 'scram',
      scram: { from: 'environment', username: 'tally', password: 's3cret' },
    });
  });

  it('reads where SCRAM credentials are kept: Secrets Manager or SSM', () => {
    expect(
      loadPublishConfig({ ...MSK, KAFKA_AUTH: 'scram', KAFKA_SASL_SECRET_ID: 'arn:s' }).kafka,
    ).toMatchObject({ scram: { from: 'secrets-manager', secretId: 'arn:s' } });
    expect(
      loadPublishConfig({ ...MSK, KAFKA_AUTH: 'scram', KAFKA_SASL_PARAMETER: '/tally/kafka' })
        .kafka,
    ).toMatchObject({ scram: { from: 'ssm', parameterName: '/tally/kafka' } });
  });

  it('refuses SCRAM credentials from two places, naming them', () => {
    const error = configError({
      ...MSK,
      KAFKA_AUTH: 'scram',
      KAFKA_SASL_SECRET_ID: 'arn:s',
      KAFKA_SASL_PARAMETER: '/tally/kafka',
    });

    expect(error.message).toContain('KAFKA_SASL_SECRET_ID, KAFKA_SASL_PARAMETER');
    expect(error.field).toBe('KAFKA_SASL_PARAMETER');
  });

  it('refuses SCRAM settings when KAFKA_AUTH is not scram (they would be ignored)', () => {
    const error = configError({ ...MSK, KAFKA_AUTH: 'iam', KAFKA_SASL_SECRET_ID: 'arn:s' });

    expect(error.message).toContain('KAFKA_SASL_SECRET_ID is set but KAFKA_AUTH is not scram');
    expect(error.field).toBe('KAFKA_AUTH');
  });

  it('KAFKA_AUTH=scram with no credentials says where they may come from', () => {
    const error = configError({ ...MSK, KAFKA_AUTH: 'scram' });

    expect(error.message).toMatch(/KAFKA_SASL_SECRET_ID.*KAFKA_SASL_PARAMETER/);
  });

  it.each([
    ['KAFKA_SASL_USERNAME', { KAFKA_SASL_PASSWORD: 's3cret' }],
    ['KAFKA_SASL_PASSWORD', { KAFKA_SASL_USERNAME: 'tally' }],
  ])('KAFKA_AUTH=scram without %s fails, naming it', (missing, present) => {
    const error = configError({ ...MSK, KAFKA_AUTH: 'scram', ...present });

    expect(error.message).toContain(missing);
    expect(error.field).toBe(missing);
  });

  it.each(['bogus', 'IAM', 'sasl'])('refuses KAFKA_AUTH=%s', (auth) => {
    const error = configError({ ...MSK, KAFKA_AUTH: auth });

    expect(error.message).toContain('KAFKA_AUTH');
    expect(error.message).toContain(auth);
    expect(error.field).toBe('KAFKA_AUTH');
  });
});

describe('loadPublishConfig: limits', () => {
  it('has the documented defaults', () => {
    const config = loadPublishConfig(BROKERS);

    expect(config).toMatchObject({
      region: 'us-east-1',
      dynamodbEndpoint: undefined,
      dynamodbTimeoutMs: 3000,
      topicAllowList: [],
      maxBatchEntries: 10_000,
      maxRequestBytes: 6_000_000,
      maxMessageBytes: 1_048_588,
      gatewayTimeoutMs: 29_000,
      deadlineMarginMs: 1000,
      maxConcurrentRequests: 64,
      kafkaRequestTimeoutMs: 10_000,
      kafkaRetries: 5,
      idempotencyTtlSeconds: 86_400,
    });
  });

  it('reads set values', () => {
    const config = loadPublishConfig({
      ...BROKERS,
      AWS_REGION: 'eu-west-1',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      TALLY_MAX_BATCH_ENTRIES: '500',
      TALLY_GATEWAY_TIMEOUT_MS: ' 5000 ',
      TALLY_DEADLINE_MARGIN_MS: '0',
      TALLY_KAFKA_RETRIES: '1',
    });

    expect(config).toMatchObject({
      region: 'eu-west-1',
      dynamodbEndpoint: 'http://127.0.0.1:8000',
      maxBatchEntries: 500,
      gatewayTimeoutMs: 5000,
      deadlineMarginMs: 0,
      kafkaRetries: 1,
    });
  });

  it.each([
    ['TALLY_MAX_BATCH_ENTRIES', '0', 1, 10_000],
    ['TALLY_MAX_BATCH_ENTRIES', 'abc', 1, 10_000],
    ['TALLY_MAX_BATCH_ENTRIES', '10001', 1, 10_000],
    ['TALLY_MAX_BATCH_ENTRIES', '2.5', 1, 10_000],
    ['TALLY_MAX_REQUEST_BYTES', '6291457', 1024, 6_291_456],
    ['TALLY_MAX_MESSAGE_BYTES', '1023', 1024, 100_000_000],
    ['TALLY_GATEWAY_TIMEOUT_MS', '99', 100, 900_000],
    ['TALLY_DEADLINE_MARGIN_MS', '-1', 0, 60_000],
    ['TALLY_MAX_CONCURRENT_REQUESTS', '1e9', 1, 10_000],
    ['TALLY_KAFKA_REQUEST_TIMEOUT_MS', 'ten', 100, 120_000],
    ['TALLY_KAFKA_RETRIES', '0', 1, 100],
    ['TALLY_DYNAMODB_TIMEOUT_MS', '60001', 100, 60_000],
    ['TALLY_IDEMPOTENCY_TTL_SECONDS', '59', 60, 31_536_000],
  ])('refuses %s=%s, naming it and the range %i to %i', (name, value, min, max) => {
    const error = configError({ ...BROKERS, [name]: value });

    expect(error.message).toContain(name);
    expect(error.message).toContain(`from ${min} to ${max}`);
    expect(error.message).toContain(value);
    expect(error.field).toBe(name);
  });

  it('splits TALLY_TOPIC_ALLOW_LIST on commas, trimmed, without empty items', () => {
    const config = loadPublishConfig({
      ...BROKERS,
      TALLY_TOPIC_ALLOW_LIST: ' orders , payments.* ,, audit-? ,',
    });

    expect(config.topicAllowList).toEqual(['orders', 'payments.*', 'audit-?']);
  });
});

describe('loadPublishConfig: transactional publish (issue 33)', () => {
  const POOL: Env = { ...BROKERS, TALLY_TXN_IDS_TABLE: 'tally-txn-ids' };

  it('is off without TALLY_TXN_IDS_TABLE, on with it, with its defaults', () => {
    expect(loadPublishConfig(BROKERS).txn).toBeUndefined();
    expect(loadPublishConfig(BROKERS).transactionalTopics).toEqual([]);
    expect(loadPublishConfig(POOL).txn).toEqual({
      table: 'tally-txn-ids',
      idPrefix: 'tally-publish',
      poolSize: 64,
      leaseMs: 120_000,
      transactionTimeoutMs: 60_000,
    });
    expect(
      loadPublishConfig({ ...POOL, TALLY_TRANSACTIONAL_TOPICS: 'orders, payments' })
        .transactionalTopics,
    ).toEqual(['orders', 'payments']);
  });

  it('refuses transactional topics without the pool, and an illegal topic name', () => {
    expect(configError({ ...BROKERS, TALLY_TRANSACTIONAL_TOPICS: 'orders' }).field).toBe(
      'TALLY_TXN_IDS_TABLE',
    );
    const illegal = configError({ ...POOL, TALLY_TRANSACTIONAL_TOPICS: 'orders,bad topic' });
    expect(illegal.field).toBe('TALLY_TRANSACTIONAL_TOPICS');
    expect(illegal.message).toContain('bad topic');
  });

  it('refuses a lease or transaction timeout a request could outlive, and a bad prefix', () => {
    expect(configError({ ...POOL, TALLY_TXN_LEASE_SECONDS: '30' }).field).toBe(
      'TALLY_TXN_LEASE_SECONDS',
    );
    expect(configError({ ...POOL, TALLY_TXN_TIMEOUT_MS: '20000' }).field).toBe(
      'TALLY_TXN_TIMEOUT_MS',
    );
    expect(
      loadPublishConfig({
        ...POOL,
        TALLY_TXN_LEASE_SECONDS: '30',
        TALLY_GATEWAY_TIMEOUT_MS: '20000',
      }).txn?.leaseMs,
    ).toBe(30_000);
    expect(configError({ ...POOL, TALLY_TXN_ID_PREFIX: 'a/b' }).field).toBe('TALLY_TXN_ID_PREFIX');
  });

  it('derives the lease and transaction timeout defaults from a longer gateway timeout', () => {
    // A stack whose requests may run 120 s (the test stack's) starts with the pool configured and
    // nothing else set: the defaults outlast its longest request.
    expect(loadPublishConfig({ ...POOL, TALLY_GATEWAY_TIMEOUT_MS: '120000' }).txn).toMatchObject({
      leaseMs: 125_000,
      transactionTimeoutMs: 121_000,
    });
  });
});
