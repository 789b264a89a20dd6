import type { ScramCredentialSource } from '../adapters/secrets/scram-credentials.js';
import { ConfigurationError } from '../core/shared/errors.js';
import { topicNameProblem } from '../core/shared/topic-names.js';

// Configuration is read here and nowhere else: parsed once per container, validated, and a
// problem fails the cold start with a message naming the variable.

export type Env = Readonly<Record<string, string | undefined>>;

function required(env: Env, name: string): string {
  const value = env[name]?.trim();
  if (!value) throw new ConfigurationError(`${name} is required`, { field: name });
  return value;
}

export function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

export function integer(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const text = optional(env, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigurationError(
      `${name} must be an integer from ${min} to ${max}, got "${text}"`,
      {
        field: name,
      },
    );
  }
  return value;
}

function fraction(env: Env, name: string, fallback: number): number {
  const text = optional(env, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || value > 1) {
    throw new ConfigurationError(`${name} must be a number from 0 to 1, got "${text}"`, {
      field: name,
    });
  }
  return value;
}

function list(env: Env, name: string): string[] {
  return (optional(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

export type KafkaSource =
  | {
      readonly kind: 'brokers';
      readonly brokers: readonly string[];
      readonly auth: 'plaintext' | 'scram';
      readonly tls: boolean;
      /** Where the SCRAM credentials are read from, when auth is 'scram'. */
      readonly scram: ScramCredentialSource | undefined;
    }
  | {
      readonly kind: 'msk';
      readonly clusterArn: string;
      readonly auth: 'iam' | 'scram' | 'tls' | 'plaintext';
      readonly scram: ScramCredentialSource | undefined;
    };

/** What every function reads: where Kafka and DynamoDB are, and how long to wait for them. */
export interface CommonConfig {
  readonly region: string;
  readonly kafka: KafkaSource;
  readonly dynamodbEndpoint: string | undefined;
  /** Per DynamoDB attempt (two attempts): a DynamoDB that does not answer becomes a 503. */
  readonly dynamodbTimeoutMs: number;
  readonly kafkaRequestTimeoutMs: number;
}

function commonConfig(env: Env): CommonConfig {
  return {
    region: optional(env, 'AWS_REGION') ?? 'us-east-1',
    kafka: kafkaSource(env),
    dynamodbEndpoint: optional(env, 'DYNAMODB_ENDPOINT'),
    dynamodbTimeoutMs: integer(env, 'TALLY_DYNAMODB_TIMEOUT_MS', 3000, 100, 60_000),
    kafkaRequestTimeoutMs: integer(env, 'TALLY_KAFKA_REQUEST_TIMEOUT_MS', 10_000, 100, 120_000),
  };
}

export interface PublishConfig extends CommonConfig {
  readonly tables: {
    readonly streams: string;
    readonly ledger: string;
    readonly reservations: string;
  };
  /** Topic patterns (`*`, `?`) this API may write to; empty = any non-internal topic. */
  readonly topicAllowList: readonly string[];
  readonly maxBatchEntries: number;
  readonly maxRequestBytes: number;
  readonly maxMessageBytes: number;
  readonly gatewayTimeoutMs: number;
  readonly deadlineMarginMs: number;
  readonly maxConcurrentRequests: number;
  readonly kafkaRetries: number;
  readonly idempotencyTtlSeconds: number;
  /** TALLY_LEDGER_RETENTION_DAYS: ledger blocks expire this long after their last write. */
  readonly ledgerRetentionDays: number;
  /**
   * The audit's horizon (TALLY_AUDIT_HORIZON_SECONDS, the same variable the audit reads): a
   * request ending within it of its seqs' allocation sends before any ledger write.
   */
  readonly auditHorizonSeconds: number;
  /** Most seqs a container leases beyond a request's own (0: no leases). */
  readonly seqLeaseMax: number;
  /** The schema registry for AVRO, PROTOBUF and JSONSCHEMA records; none: they are 42206. */
  readonly schemaRegistry: SchemaRegistryConfig | undefined;
  /**
   * Topics whose requests are each sent in one Kafka transaction (TALLY_TRANSACTIONAL_TOPICS,
   * exact names): `Tally-Transactional: false` on one of them is refused (docs/transactions.md).
   */
  readonly transactionalTopics: readonly string[];
  /** The transactional id pool; undefined without TALLY_TXN_IDS_TABLE (no transactional mode). */
  readonly txn: TxnConfig | undefined;
  /** AWS Glue Schema Registry instead (TALLY_SCHEMA_REGISTRY=glue); then schemaRegistry is none. */
  readonly glueSchemaRegistry: GlueSchemaRegistryConfig | undefined;
}

export interface TxnConfig {
  /** TALLY_TXN_IDS_TABLE: the lease pool's table (infra/resources/tables.yml, TxnIdsTable). */
  readonly table: string;
  /** TALLY_TXN_ID_PREFIX: ids `<prefix>-0` … (the MSK IAM grant names `<prefix>*`). */
  readonly idPrefix: string;
  /** TALLY_TXN_POOL_SIZE: ids in the pool, at least the peak of warm publishing containers. */
  readonly poolSize: number;
  /** TALLY_TXN_LEASE_SECONDS: a container's lease on its id, renewed while it is warm. */
  readonly leaseMs: number;
  /** TALLY_TXN_TIMEOUT_MS: transaction.timeout.ms (at most the brokers' transaction.max.timeout.ms). */
  readonly transactionTimeoutMs: number;
}

/** Clock differences between containers a lease allows for. */
export const TXN_LEASE_SKEW_MS = 2000;

function txnConfig(
  env: Env,
  transactionalTopics: readonly string[],
  gatewayTimeoutMs: number,
): TxnConfig | undefined {
  const table = optional(env, 'TALLY_TXN_IDS_TABLE');
  if (table === undefined) {
    if (transactionalTopics.length > 0) {
      throw new ConfigurationError(
        'TALLY_TRANSACTIONAL_TOPICS is set but TALLY_TXN_IDS_TABLE is not: transactional publish leases its ids from that table',
        { field: 'TALLY_TXN_IDS_TABLE' },
      );
    }
    return undefined;
  }
  const idPrefix = optional(env, 'TALLY_TXN_ID_PREFIX') ?? 'tally-publish';
  // A transactional.id is any string; the prefix is also a resource name in IAM policies.
  if (!/^[a-zA-Z0-9._-]{1,200}$/.test(idPrefix)) {
    throw new ConfigurationError(
      `TALLY_TXN_ID_PREFIX must be 1 to 200 of a-z A-Z 0-9 . _ -, got "${idPrefix}"`,
      { field: 'TALLY_TXN_ID_PREFIX' },
    );
  }
  // Defaults outlast the longest request whatever TALLY_GATEWAY_TIMEOUT_MS is (a test stack's is
  // 120 s); a value set by hand is checked against it below.
  const leaseDefault = Math.max(
    120,
    Math.ceil((gatewayTimeoutMs + 2 * TXN_LEASE_SKEW_MS) / 1000) + 1,
  );
  const leaseMs = integer(env, 'TALLY_TXN_LEASE_SECONDS', leaseDefault, 10, 86_400) * 1000;
  // The longest request is the gateway's timeout: a lease must outlast it (core/publish/txn-id-pool.ts).
  if (leaseMs <= gatewayTimeoutMs + 2 * TXN_LEASE_SKEW_MS) {
    throw new ConfigurationError(
      `TALLY_TXN_LEASE_SECONDS (${leaseMs / 1000} s) must be longer than TALLY_GATEWAY_TIMEOUT_MS (${gatewayTimeoutMs} ms) plus ${(2 * TXN_LEASE_SKEW_MS) / 1000} s of clock skew`,
      { field: 'TALLY_TXN_LEASE_SECONDS' },
    );
  }
  const transactionTimeoutMs = integer(
    env,
    'TALLY_TXN_TIMEOUT_MS',
    Math.min(900_000, Math.max(60_000, gatewayTimeoutMs + 1000)),
    1000,
    900_000,
  );
  // The coordinator aborts a transaction open longer than this: never a live request's.
  if (transactionTimeoutMs <= gatewayTimeoutMs) {
    throw new ConfigurationError(
      `TALLY_TXN_TIMEOUT_MS (${transactionTimeoutMs}) must be longer than TALLY_GATEWAY_TIMEOUT_MS (${gatewayTimeoutMs}): the coordinator would abort a request's transaction while it runs`,
      { field: 'TALLY_TXN_TIMEOUT_MS' },
    );
  }
  return {
    table,
    idPrefix,
    poolSize: integer(env, 'TALLY_TXN_POOL_SIZE', 64, 1, 10_000),
    leaseMs,
    transactionTimeoutMs,
  };
}

/** TALLY_TRANSACTIONAL_TOPICS: exact topic names, each a legal one. */
function transactionalTopics(env: Env): string[] {
  const topics = list(env, 'TALLY_TRANSACTIONAL_TOPICS');
  for (const topic of topics) {
    const problem = topicNameProblem(topic);
    if (problem !== undefined) {
      throw new ConfigurationError(`TALLY_TRANSACTIONAL_TOPICS: "${topic}": ${problem}`, {
        field: 'TALLY_TRANSACTIONAL_TOPICS',
      });
    }
  }
  return topics;
}

export interface GlueSchemaRegistryConfig {
  /** TALLY_GLUE_REGISTRY_NAME; Glue's own default registry, `default-registry`, when unset. */
  readonly registryName: string;
  /** TALLY_GLUE_AUTO_REGISTER=true: register an inline schema Glue does not have (off). */
  readonly autoRegister: boolean;
  /** TALLY_GLUE_COMPRESSION: `none` (default) or `zlib`, the wire format's byte 1. */
  readonly compression: 'none' | 'zlib';
  /** TALLY_GLUE_ENDPOINT: a local stand-in (`npm start`'s) instead of AWS Glue in AWS_REGION. */
  readonly endpoint: string | undefined;
}

/** TALLY_SCHEMA_REGISTRY: `glue` selects AWS Glue; unset (or `confluent`) the Confluent API's URL. */
function glueSchemaRegistryConfig(env: Env): GlueSchemaRegistryConfig | undefined {
  const selected = optional(env, 'TALLY_SCHEMA_REGISTRY') ?? 'confluent';
  // `1` is the local stack's "start a registry" (infra/local/stack.ts): the Confluent API's.
  if (selected === 'confluent' || selected === '1') return undefined;
  if (selected !== 'glue') {
    throw new ConfigurationError(
      `TALLY_SCHEMA_REGISTRY must be glue or confluent, got "${selected}"`,
      { field: 'TALLY_SCHEMA_REGISTRY' },
    );
  }
  if (optional(env, 'TALLY_SCHEMA_REGISTRY_URL') !== undefined) {
    throw new ConfigurationError(
      'TALLY_SCHEMA_REGISTRY=glue and TALLY_SCHEMA_REGISTRY_URL are both set: a deployment uses one registry',
      { field: 'TALLY_SCHEMA_REGISTRY_URL' },
    );
  }
  const registryName = optional(env, 'TALLY_GLUE_REGISTRY_NAME') ?? 'default-registry';
  // Glue's RegistryName: 1 to 255 characters of [a-zA-Z0-9-_$#.].
  if (!/^[a-zA-Z0-9\-_$#.]{1,255}$/.test(registryName)) {
    throw new ConfigurationError(
      `TALLY_GLUE_REGISTRY_NAME must be 1 to 255 of a-z A-Z 0-9 - _ $ # . (Glue's rule), got "${registryName}"`,
      { field: 'TALLY_GLUE_REGISTRY_NAME' },
    );
  }
  const autoRegister = optional(env, 'TALLY_GLUE_AUTO_REGISTER') ?? 'false';
  const compression = optional(env, 'TALLY_GLUE_COMPRESSION') ?? 'none';
  for (const [name, value, allowed] of [
    ['TALLY_GLUE_AUTO_REGISTER', autoRegister, ['true', 'false']],
    ['TALLY_GLUE_COMPRESSION', compression, ['none', 'zlib']],
  ] as const) {
    if (!(allowed as readonly string[]).includes(value)) {
      throw new ConfigurationError(`${name} must be ${allowed.join(' or ')}, got "${value}"`, {
        field: name,
      });
    }
  }
  return {
    registryName,
    autoRegister: autoRegister === 'true',
    compression: compression as 'none' | 'zlib',
    endpoint: optional(env, 'TALLY_GLUE_ENDPOINT'),
  };
}

export interface SchemaRegistryConfig {
  /** The Confluent Schema Registry API's base URL (TALLY_SCHEMA_REGISTRY_URL). */
  readonly url: string;
  /** Basic auth: a Secrets Manager secret {username, password}, or the environment; none: none. */
  readonly credentials: ScramCredentialSource | undefined;
  /** Per registry call (TALLY_SCHEMA_REGISTRY_TIMEOUT_MS). */
  readonly timeoutMs: number;
}

const REGISTRY_NAMES = {
  what: "the schema registry's credentials",
  secretId: 'TALLY_SCHEMA_REGISTRY_SECRET_ID',
  parameter: 'TALLY_SCHEMA_REGISTRY_SECRET_ID',
  username: 'TALLY_SCHEMA_REGISTRY_USERNAME',
  password: 'TALLY_SCHEMA_REGISTRY_PASSWORD',
} as const;

/**
 * TALLY_SCHEMA_REGISTRY_URL (http or https), and its basic auth from one place: a Secrets
 * Manager secret (TALLY_SCHEMA_REGISTRY_SECRET_ID, JSON {username, password}, read as Kafka's
 * SCRAM secret is) or TALLY_SCHEMA_REGISTRY_USERNAME + _PASSWORD (local runs).
 */
function schemaRegistryConfig(env: Env): SchemaRegistryConfig | undefined {
  const url = optional(env, 'TALLY_SCHEMA_REGISTRY_URL');
  const secretId = optional(env, REGISTRY_NAMES.secretId);
  const username = optional(env, REGISTRY_NAMES.username);
  const password = optional(env, REGISTRY_NAMES.password);
  const timeoutMs = integer(env, 'TALLY_SCHEMA_REGISTRY_TIMEOUT_MS', 5000, 100, 60_000);
  const given: string[] = [];
  if (secretId) given.push(REGISTRY_NAMES.secretId);
  if (username) given.push(REGISTRY_NAMES.username);
  if (url === undefined) {
    const set = given[0] ?? (password && REGISTRY_NAMES.password);
    if (set) {
      throw new ConfigurationError(`${set} is set but TALLY_SCHEMA_REGISTRY_URL is not`, {
        field: 'TALLY_SCHEMA_REGISTRY_URL',
      });
    }
    return undefined;
  }
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new ConfigurationError(`TALLY_SCHEMA_REGISTRY_URL must be an http(s) URL, got "${url}"`, {
      field: 'TALLY_SCHEMA_REGISTRY_URL',
    });
  }
  if (given.length > 1) {
    throw new ConfigurationError(`set one of ${given.join(', ')}, not both`, {
      field: REGISTRY_NAMES.secretId,
    });
  }
  if (secretId) {
    return {
      url,
      timeoutMs,
      credentials: { from: 'secrets-manager', secretId, names: REGISTRY_NAMES },
    };
  }
  if (username !== undefined || password !== undefined) {
    return {
      url,
      timeoutMs,
      credentials: {
        from: 'environment',
        username: required(env, REGISTRY_NAMES.username),
        password: required(env, REGISTRY_NAMES.password),
        names: REGISTRY_NAMES,
      },
    };
  }
  return { url, timeoutMs, credentials: undefined };
}

function kafkaSource(env: Env): KafkaSource {
  const brokers = list(env, 'KAFKA_BROKERS');
  const clusterArn = optional(env, 'MSK_CLUSTER_ARN');
  if (brokers.length > 0 && clusterArn) {
    throw new ConfigurationError('set KAFKA_BROKERS or MSK_CLUSTER_ARN, not both', {
      field: 'KAFKA_BROKERS',
    });
  }
  if (clusterArn) {
    const auth = optional(env, 'KAFKA_AUTH') ?? 'iam';
    if (auth !== 'iam' && auth !== 'scram' && auth !== 'tls' && auth !== 'plaintext') {
      throw new ConfigurationError(
        `KAFKA_AUTH must be iam, scram, tls or plaintext, got "${auth}"`,
        { field: 'KAFKA_AUTH' },
      );
    }
    return { kind: 'msk', clusterArn, auth, scram: scramSource(env, auth === 'scram') };
  }
  if (brokers.length === 0) {
    throw new ConfigurationError('KAFKA_BROKERS (host:port,…) or MSK_CLUSTER_ARN is required', {
      field: 'KAFKA_BROKERS',
    });
  }
  const auth = optional(env, 'KAFKA_AUTH') ?? 'plaintext';
  if (auth !== 'plaintext' && auth !== 'scram') {
    throw new ConfigurationError(
      `KAFKA_AUTH with KAFKA_BROKERS must be plaintext or scram (iam and tls are for MSK_CLUSTER_ARN), got "${auth}"`,
      { field: 'KAFKA_AUTH' },
    );
  }
  const tls = optional(env, 'KAFKA_TLS') ?? 'false';
  if (tls !== 'true' && tls !== 'false') {
    throw new ConfigurationError(`KAFKA_TLS must be true or false, got "${tls}"`, {
      field: 'KAFKA_TLS',
    });
  }
  for (const broker of brokers) {
    const port = Number(broker.slice(broker.lastIndexOf(':') + 1));
    if (!/^[^\s:]+:\d{1,5}$/.test(broker) || port < 1 || port > 65_535) {
      throw new ConfigurationError(`KAFKA_BROKERS: "${broker}" is not host:port`, {
        field: 'KAFKA_BROKERS',
      });
    }
  }
  return {
    kind: 'brokers',
    brokers,
    auth,
    tls: tls === 'true',
    scram: scramSource(env, auth === 'scram'),
  };
}

/** The places SCRAM credentials may come from, each by the variables that name it. */
const SCRAM_SOURCES = [
  ['KAFKA_SASL_SECRET_ID'],
  ['KAFKA_SASL_PARAMETER'],
  ['KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD'],
];

/**
 * Exactly one place for SCRAM credentials: a Secrets Manager secret (KAFKA_SASL_SECRET_ID), an
 * SSM SecureString (KAFKA_SASL_PARAMETER), or KAFKA_SASL_USERNAME + KAFKA_SASL_PASSWORD.
 */
function scramSource(env: Env, wanted: boolean): ScramCredentialSource | undefined {
  // Per place, the first of its variables that is set.
  const given = SCRAM_SOURCES.flatMap(
    (names) => names.find((name) => optional(env, name) !== undefined) ?? [],
  );
  if (!wanted) {
    if (given[0] !== undefined) {
      throw new ConfigurationError(`${given[0]} is set but KAFKA_AUTH is not scram`, {
        field: 'KAFKA_AUTH',
      });
    }
    return undefined;
  }
  if (given.length !== 1) {
    throw new ConfigurationError(
      given.length === 0
        ? 'KAFKA_AUTH=scram needs KAFKA_SASL_SECRET_ID (Secrets Manager), KAFKA_SASL_PARAMETER (SSM) or KAFKA_SASL_USERNAME/KAFKA_SASL_PASSWORD'
        : `KAFKA_AUTH=scram: set one of ${given.join(', ')}, not several`,
      { field: given[1] ?? 'KAFKA_SASL_SECRET_ID' },
    );
  }
  const secretId = optional(env, 'KAFKA_SASL_SECRET_ID');
  if (secretId) return { from: 'secrets-manager', secretId };
  const parameterName = optional(env, 'KAFKA_SASL_PARAMETER');
  if (parameterName) return { from: 'ssm', parameterName };
  return {
    from: 'environment',
    username: required(env, 'KAFKA_SASL_USERNAME'),
    password: required(env, 'KAFKA_SASL_PASSWORD'),
  };
}

/** Read by publish and audit alike: set it once for both (serverless.yml's provider section). */
const auditHorizonSeconds = (env: Env) =>
  integer(env, 'TALLY_AUDIT_HORIZON_SECONDS', 300, 0, 86_400);

/**
 * How long a ledger block is kept after its last write (DynamoDB TTL), refused unless the audit's
 * settings named in `inside` (seconds) are shorter: the audit settles and folds a seq before
 * its block may expire.
 */
function ledgerRetentionDays(env: Env, inside: Readonly<Record<string, number>>): number {
  const days = integer(env, 'TALLY_LEDGER_RETENTION_DAYS', 30, 1, 3650);
  for (const [name, seconds] of Object.entries(inside)) {
    if (seconds < days * 86_400) continue;
    throw new ConfigurationError(
      `${name} (${seconds} s) must be shorter than TALLY_LEDGER_RETENTION_DAYS (${days} days = ${days * 86_400} s): the audit needs a seq's ledger block until it has settled and folded it; lower ${name} or raise TALLY_LEDGER_RETENTION_DAYS`,
      { field: 'TALLY_LEDGER_RETENTION_DAYS' },
    );
  }
  return days;
}

export function loadPublishConfig(env: Env = process.env): PublishConfig {
  const gatewayTimeoutMs = integer(env, 'TALLY_GATEWAY_TIMEOUT_MS', 29_000, 100, 900_000);
  const transactional = transactionalTopics(env);
  return {
    ...commonConfig(env),
    tables: {
      streams: required(env, 'TALLY_STREAMS_TABLE'),
      ledger: required(env, 'TALLY_LEDGER_TABLE'),
      reservations: required(env, 'TALLY_RESERVATIONS_TABLE'),
    },
    topicAllowList: list(env, 'TALLY_TOPIC_ALLOW_LIST'),
    maxBatchEntries: integer(env, 'TALLY_MAX_BATCH_ENTRIES', 10_000, 1, 10_000),
    maxRequestBytes: integer(env, 'TALLY_MAX_REQUEST_BYTES', 6_000_000, 1024, 6_291_456),
    maxMessageBytes: integer(env, 'TALLY_MAX_MESSAGE_BYTES', 1_048_588, 1024, 100_000_000),
    gatewayTimeoutMs,
    deadlineMarginMs: integer(env, 'TALLY_DEADLINE_MARGIN_MS', 1000, 0, 60_000),
    maxConcurrentRequests: integer(env, 'TALLY_MAX_CONCURRENT_REQUESTS', 64, 1, 10_000),
    kafkaRetries: integer(env, 'TALLY_KAFKA_RETRIES', 5, 1, 100),
    idempotencyTtlSeconds: integer(env, 'TALLY_IDEMPOTENCY_TTL_SECONDS', 86_400, 60, 31_536_000),
    auditHorizonSeconds: auditHorizonSeconds(env),
    ledgerRetentionDays: ledgerRetentionDays(env, {
      TALLY_AUDIT_HORIZON_SECONDS: auditHorizonSeconds(env),
    }),
    seqLeaseMax: integer(env, 'TALLY_SEQ_LEASE_MAX', 100, 0, 1000),
    schemaRegistry: schemaRegistryConfig(env),
    glueSchemaRegistry: glueSchemaRegistryConfig(env),
    transactionalTopics: transactional,
    txn: txnConfig(env, transactional, gatewayTimeoutMs),
  };
}

export interface ReconcileConfig extends CommonConfig {
  readonly tables: {
    readonly mappings: string;
    readonly offsetHistory: string;
    readonly reconcileReports: string;
  };
  /** Observations kept per partition, as Burrow's intervals. */
  readonly windowSize: number;
  /** Burrow's `allowed-lag`: a lag at or below it counts as zero (default 0). */
  readonly allowedLag: number;
  /** Burrow's `minimum-complete`: windows less full than this share are judged OK (default 0). */
  readonly minimumComplete: number;
  /** The cluster's name on the Burrow routes (besides its Kafka cluster id); optional. */
  readonly burrowClusterName: string | undefined;
  /** How long mappings of a member that left are kept. */
  readonly mappingGraceMs: number;
  /** How long dated reports, reports of gone groups and unobserved offset history are kept. */
  readonly retentionMs: number;
  /** Executed restores kept per group, newest first. */
  readonly restoresKept: number;
}

export function loadReconcileConfig(env: Env = process.env): ReconcileConfig {
  return {
    ...commonConfig(env),
    tables: {
      mappings: required(env, 'TALLY_MAPPINGS_TABLE'),
      offsetHistory: required(env, 'TALLY_OFFSET_HISTORY_TABLE'),
      reconcileReports: required(env, 'TALLY_RECONCILE_REPORTS_TABLE'),
    },
    windowSize: integer(env, 'TALLY_RECONCILE_WINDOW', 10, 2, 100),
    allowedLag: integer(env, 'TALLY_BURROW_ALLOWED_LAG', 0, 0, Number.MAX_SAFE_INTEGER),
    minimumComplete: fraction(env, 'TALLY_BURROW_MINIMUM_COMPLETE', 0),
    burrowClusterName: optional(env, 'TALLY_BURROW_CLUSTER_NAME'),
    mappingGraceMs: integer(env, 'TALLY_MAPPING_GRACE_SECONDS', 300, 0, 86_400) * 1000,
    retentionMs: integer(env, 'TALLY_RECONCILE_RETENTION_DAYS', 14, 1, 365) * 86_400_000,
    restoresKept: integer(env, 'TALLY_RESTORE_RECORDS_KEPT', 100, 1, 10_000),
  };
}

export interface ReceiptsConfig extends CommonConfig {
  readonly receiptsTable: string;
}

export function loadReceiptsConfig(env: Env = process.env): ReceiptsConfig {
  return { ...commonConfig(env), receiptsTable: required(env, 'TALLY_RECEIPTS_TABLE') };
}

export interface OnceConfig extends CommonConfig {
  readonly onceTable: string;
  /** How long a claim holds before another may take it over: above the function's timeout. */
  readonly claimMs: number;
  /** How long done-marks are kept after their last mark. */
  readonly horizonMs: number;
}

/** The once guard (functions/consumer/tally-once.ts): its table, claim expiry and retention horizon. */
export function loadOnceConfig(env: Env = process.env): OnceConfig {
  return {
    ...commonConfig(env),
    onceTable: required(env, 'TALLY_ONCE_TABLE'),
    claimMs: integer(env, 'TALLY_ONCE_CLAIM_SECONDS', 900, 1, 43_200) * 1000,
    horizonMs: integer(env, 'TALLY_ONCE_HORIZON_DAYS', 30, 1, 365) * 86_400_000,
  };
}

/** The consumer group an MSK-triggered function records receipts for (its event source's). */
export function receiptsGroup(env: Env = process.env): string {
  return required(env, 'TALLY_RECEIPTS_GROUP');
}

export interface AuditConfig extends CommonConfig {
  /** The streams' counters: seqs up to them with no ledger fate are holes the audit voids. */
  readonly streamsTable: string;
  readonly ledgerTable: string;
  readonly receiptsTable: string;
  readonly auditsTable: string;
  readonly reconcileReportsTable: string;
  /** Topics the scheduled audit reads. */
  readonly topics: readonly string[];
  /** Groups whose receipts every audit compares (a request may name others). */
  readonly groups: readonly string[];
  readonly horizonSeconds: number;
  /** Longest a run reads the log before it checkpoints and stops. */
  readonly scanTimeoutMs: number;
  /** Width of the report's time buckets. */
  readonly bucketSeconds: number;
  /** Detail older than this is folded into totals: what bounds the audit's checkpoint. */
  readonly retentionSeconds: number;
  /** Each run reads again the ledger blocks written this long before the last one started. */
  readonly ledgerLagSeconds: number;
  /** TALLY_LEDGER_RETENTION_DAYS: longer than the horizon and the retention above. */
  readonly ledgerRetentionDays: number;
  /**
   * TALLY_TXN_TIMEOUT_MS as publish has it (unset: 900 s, the most it accepts): a transactional
   * block older than this is settled by the audit (docs/transactions.md).
   */
  readonly transactionTimeoutMs: number;
}

const auditRetentionSeconds = (env: Env) =>
  integer(env, 'TALLY_AUDIT_RETENTION_SECONDS', 604_800, 86_400, 2_678_400);

export function loadAuditConfig(env: Env = process.env): AuditConfig {
  return {
    ...commonConfig(env),
    streamsTable: required(env, 'TALLY_STREAMS_TABLE'),
    ledgerTable: required(env, 'TALLY_LEDGER_TABLE'),
    receiptsTable: required(env, 'TALLY_RECEIPTS_TABLE'),
    auditsTable: required(env, 'TALLY_AUDITS_TABLE'),
    reconcileReportsTable: required(env, 'TALLY_RECONCILE_REPORTS_TABLE'),
    topics: list(env, 'TALLY_AUDIT_TOPICS'),
    groups: list(env, 'TALLY_AUDIT_GROUPS'),
    horizonSeconds: auditHorizonSeconds(env),
    scanTimeoutMs: integer(env, 'TALLY_AUDIT_SCAN_TIMEOUT_MS', 600_000, 1000, 900_000),
    bucketSeconds: integer(env, 'TALLY_AUDIT_BUCKET_SECONDS', 300, 1, 86_400),
    // At least the longest horizon (an UNKNOWN is settled before it is folded); at most a month,
    // for the checkpoint's bound (one count per bucket of the topic is kept that long).
    retentionSeconds: auditRetentionSeconds(env),
    // Longer than a ledger write can take to show in the write-time index (in-flight puts, the
    // index's lag, clocks): a block written then is read again, never missed.
    ledgerLagSeconds: integer(env, 'TALLY_AUDIT_LEDGER_LAG_SECONDS', 60, 1, 3600),
    ledgerRetentionDays: ledgerRetentionDays(env, {
      TALLY_AUDIT_HORIZON_SECONDS: auditHorizonSeconds(env),
      TALLY_AUDIT_RETENTION_SECONDS: auditRetentionSeconds(env),
    }),
    transactionTimeoutMs: integer(env, 'TALLY_TXN_TIMEOUT_MS', 900_000, 1000, 900_000),
  };
}

export interface WorkflowConfig extends CommonConfig {
  readonly approvalsTable: string;
  /** A local Step Functions API (the `npm start` stack's) instead of AWS. */
  readonly stepFunctionsEndpoint: string | undefined;
}

export function loadWorkflowConfig(env: Env = process.env): WorkflowConfig {
  return {
    ...commonConfig(env),
    approvalsTable: required(env, 'TALLY_APPROVALS_TABLE'),
    stepFunctionsEndpoint: optional(env, 'TALLY_STEP_FUNCTIONS_ENDPOINT'),
  };
}

/**
 * Tracing (TALLY_TRACING, off by default): X-Ray traces through Powertools' Tracer, which comes
 * from the Powertools Lambda layer serverless.yml attaches only then (docs/operations.md). Read
 * by every function at init, whatever its other configuration.
 */
export interface TracingConfig {
  readonly enabled: boolean;
}

export function loadTracingConfig(env: Env = process.env): TracingConfig {
  const text = optional(env, 'TALLY_TRACING') ?? 'false';
  if (text !== 'true' && text !== 'false') {
    throw new ConfigurationError(`TALLY_TRACING must be true or false, got "${text}"`, {
      field: 'TALLY_TRACING',
    });
  }
  return { enabled: text === 'true' };
}

/**
 * The log level, read by every function at init (platform/log.ts). Powertools reads
 * POWERTOOLS_LOG_LEVEL, then LOG_LEVEL, but only in capitals, and falls back to INFO without a
 * word on any other value (`LOG_LEVEL=debug` logged at INFO): here either case is taken, and
 * anything else fails the cold start naming the variable. Lambda's own AWS_LAMBDA_LOG_LEVEL
 * (advanced logging controls) still wins, as Powertools lets it.
 */
export const LOG_LEVELS = [
  'TRACE',
  'DEBUG',
  'INFO',
  'WARN',
  'ERROR',
  'CRITICAL',
  'SILENT',
] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

export interface LogConfig {
  readonly level: LogLevelName;
}

export function loadLogConfig(env: Env = process.env): LogConfig {
  for (const name of ['POWERTOOLS_LOG_LEVEL', 'LOG_LEVEL']) {
    const text = optional(env, name);
    if (text === undefined) continue;
    const level = LOG_LEVELS.find((candidate) => candidate === text.toUpperCase());
    if (level === undefined) {
      throw new ConfigurationError(
        `${name} must be one of ${LOG_LEVELS.join(', ')} (either case), got "${text}"`,
        { field: name },
      );
    }
    return { level };
  }
  return { level: 'INFO' };
}
