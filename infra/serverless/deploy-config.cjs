'use strict';

// The deployment's settings, read once from the environment at packaging time, and the refusal
// to package a stage that could not work (docs/deploy.md "Configuration"). Stage `local` (the
// `npm start` stack, serverless-offline) is never checked: it has its own Kafka and tables.
//
// Every problem names the variable to set and what to put in it, all at once, so one run of
// `npm run deploy:check -- --stage prod` lists everything a first deploy still needs.

const CLUSTER_ARN = /^arn:(aws[a-z-]*):kafka:([a-z0-9-]+):(\d{12}):cluster\/([^/]+)\/([^/]+)$/;
const SECRET_ID = /^(arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+|[\w/+=.@-]+)$/;
/** What a copied example leaves behind: it would deploy, and then fail every call. */
const PLACEHOLDER =
  /example\.invalid|11111111-2222-3333-4444-555555555555|<[a-z-]+>|^changeme$|^todo$|^none$/i;

const text = (env, name) => (env[name] || '').trim();
const list = (value) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

function bool(env, name, fallback, problems) {
  const value = text(env, name);
  if (value === '') return fallback;
  if (value === 'true' || value === 'false') return value === 'true';
  problems.push(`${name}: true or false, not "${value}"`);
  return fallback;
}

function positive(env, name, fallback, problems, { integer = true, max = Infinity } = {}) {
  const value = text(env, name);
  if (value === '') return fallback;
  const number = Number(value);
  if (
    !Number.isFinite(number) ||
    number <= 0 ||
    number > max ||
    (integer && !Number.isInteger(number))
  ) {
    problems.push(
      `${name}: a positive ${integer ? 'integer' : 'number'}${max < Infinity ? ` up to ${max}` : ''}, not "${value}"`,
    );
    return fallback;
  }
  return number;
}

/** The configured settings of a deployment, with every problem found on the way. */
function readSettings(env, stage, region) {
  const problems = [];
  const warnings = [];
  const local = stage === 'local';
  const productionStages = list(text(env, 'TALLY_PRODUCTION_STAGES') || 'prod,production');
  const production = productionStages.includes(stage);

  // Kafka: exactly one of a cluster ARN (brokers looked up) or a broker list.
  const mskClusterArn = text(env, 'MSK_CLUSTER_ARN');
  const kafkaBrokers = text(env, 'KAFKA_BROKERS');
  if (!local) {
    if (mskClusterArn === '' && kafkaBrokers === '') {
      problems.push(
        'MSK_CLUSTER_ARN or KAFKA_BROKERS: set one — your MSK cluster (arn:aws:kafka:<region>:<account>:cluster/<name>/<uuid>, IAM auth by default) or a broker list (host:port,host:port)',
      );
    } else if (mskClusterArn !== '' && kafkaBrokers !== '') {
      problems.push('MSK_CLUSTER_ARN and KAFKA_BROKERS: set only one of them');
    }
    if (
      mskClusterArn !== '' &&
      (!CLUSTER_ARN.test(mskClusterArn) || PLACEHOLDER.test(mskClusterArn))
    ) {
      problems.push(
        `MSK_CLUSTER_ARN: "${mskClusterArn}" is not a real MSK cluster ARN (arn:aws:kafka:<region>:<account>:cluster/<name>/<uuid>)`,
      );
    }
    if (
      kafkaBrokers !== '' &&
      (PLACEHOLDER.test(kafkaBrokers) || !list(kafkaBrokers).every((b) => /^[\w.-]+:\d+$/.test(b)))
    ) {
      problems.push(`KAFKA_BROKERS: "${kafkaBrokers}" is not a list of host:port`);
    }
  }

  if (!local && text(env, 'KAFKA_AUTH') === 'scram') {
    if (text(env, 'KAFKA_SASL_SECRET_ID') === '' && text(env, 'KAFKA_SASL_PARAMETER') === '') {
      problems.push(
        'KAFKA_SASL_SECRET_ID or KAFKA_SASL_PARAMETER: with KAFKA_AUTH=scram, the Secrets Manager secret (AmazonMSK_kafka-tally…) or SSM SecureString (/kafka-tally/…) holding {"username", "password"}',
      );
    }
  }

  // The HTTP API's callers: IAM (SigV4) by default — nothing to set up but the callers' own
  // roles — or a JWT issuer's tokens. An issuer given without a mode means JWT.
  const issuer = text(env, 'TALLY_JWT_ISSUER');
  const audience = text(env, 'TALLY_JWT_AUDIENCE');
  const apiAuth = text(env, 'TALLY_API_AUTH') || (issuer !== '' ? 'jwt' : 'iam');
  if (apiAuth !== 'iam' && apiAuth !== 'jwt') {
    problems.push(`TALLY_API_AUTH: iam (SigV4, the default) or jwt, not "${apiAuth}"`);
  }
  if (!local && apiAuth === 'jwt') {
    if (issuer === '' || PLACEHOLDER.test(issuer) || !/^https:\/\/[^/\s]+/.test(issuer)) {
      problems.push(
        `TALLY_JWT_ISSUER: your identity provider's issuer URL (https://…, the "iss" of its tokens)${issuer ? `, not "${issuer}"` : ''} — or TALLY_API_AUTH=iam`,
      );
    }
    if (audience === '' || PLACEHOLDER.test(audience)) {
      problems.push(
        'TALLY_JWT_AUDIENCE: the audience (the "aud" or client id) your tokens carry for Tally',
      );
    }
  }

  // Where alarms and notifications go.
  const email = text(env, 'TALLY_NOTIFY_EMAIL');
  const externallySubscribed = bool(env, 'TALLY_NOTIFY_SUBSCRIBED', false, problems);
  if (!local && email === '' && !externallySubscribed) {
    const missing =
      'TALLY_NOTIFY_EMAIL: an address subscribed to the alarm topic — or TALLY_NOTIFY_SUBSCRIBED=true if you subscribe its AlarmTopicArn output yourself (PagerDuty, Chatbot, SQS)';
    if (production) problems.push(missing);
    else warnings.push(`stage ${stage}: no one is notified of its alarms. ${missing}`);
  }
  if (email !== '' && (PLACEHOLDER.test(email) || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email))) {
    problems.push(`TALLY_NOTIFY_EMAIL: "${email}" is not an email address`);
  }
  const webhookUrl = text(env, 'TALLY_NOTIFY_WEBHOOK_URL');
  const webhookSecretId = text(env, 'TALLY_NOTIFY_WEBHOOK_SECRET_ID');
  if (text(env, 'TALLY_NOTIFY_WEBHOOK_API_KEY') !== '') {
    problems.push(
      'TALLY_NOTIFY_WEBHOOK_API_KEY: no longer read (a literal key is visible in the template); store the key as a Secrets Manager secret and set TALLY_NOTIFY_WEBHOOK_SECRET_ID to its name or ARN',
    );
  }
  if (webhookUrl !== '') {
    if (!/^https:\/\/\S+$/.test(webhookUrl))
      problems.push(`TALLY_NOTIFY_WEBHOOK_URL: an https:// URL, not "${webhookUrl}"`);
    if (!SECRET_ID.test(webhookSecretId)) {
      problems.push(
        "TALLY_NOTIFY_WEBHOOK_SECRET_ID: the Secrets Manager secret (name or ARN) whose value is the webhook's X-Api-Key",
      );
    }
  }

  // The downstream example's MSK event source: only against a configured cluster.
  const downstreamClusterArn = text(env, 'DOWNSTREAM_MSK_CLUSTER_ARN');
  if (downstreamClusterArn !== '') {
    const match = CLUSTER_ARN.exec(downstreamClusterArn);
    if (!match || PLACEHOLDER.test(downstreamClusterArn)) {
      problems.push(
        `DOWNSTREAM_MSK_CLUSTER_ARN: "${downstreamClusterArn}" is not a real MSK cluster ARN`,
      );
    } else if (match[2] !== region) {
      problems.push(
        `DOWNSTREAM_MSK_CLUSTER_ARN: the cluster is in ${match[2]}, the stack in ${region}; an event source mapping reads a cluster of its own region (--region ${match[2]})`,
      );
    }
  }

  // The schema registry: Confluent's API (TALLY_SCHEMA_REGISTRY_URL) or AWS Glue's, not both.
  const registryKind = text(env, 'TALLY_SCHEMA_REGISTRY');
  if (!['', '1', 'confluent', 'glue'].includes(registryKind)) {
    problems.push(`TALLY_SCHEMA_REGISTRY: glue or confluent, not "${registryKind}"`);
  } else if (registryKind === 'glue') {
    if (text(env, 'TALLY_SCHEMA_REGISTRY_URL') !== '') {
      problems.push(
        'TALLY_SCHEMA_REGISTRY_URL: unset it with TALLY_SCHEMA_REGISTRY=glue (one registry per deployment)',
      );
    }
    bool(env, 'TALLY_GLUE_AUTO_REGISTER', false, problems);
  }

  // Back-pressure at the edge: each HTTP function's rate (requests/s over its routes) and the
  // latency it is sized for; reserved concurrency = ceil(rate × latency), so API Gateway's
  // throttle (429) answers before the function's concurrency runs out.
  const reserve = bool(env, 'TALLY_RESERVED_CONCURRENCY', true, problems);
  const limits = {
    publish: positive(env, 'TALLY_PUBLISH_RATE_LIMIT', 100, problems, { max: 10000 }),
    receipts: positive(env, 'TALLY_RECEIPTS_RATE_LIMIT', 50, problems, { max: 10000 }),
    read: positive(env, 'TALLY_READ_RATE_LIMIT', 20, problems, { max: 10000 }),
    // An admin call may take the function's whole timeout (29 s): one every 5 s per function.
    admin: positive(env, 'TALLY_ADMIN_RATE_LIMIT', 0.2, problems, { integer: false, max: 1000 }),
  };
  const latencySeconds =
    positive(env, 'TALLY_API_LATENCY_BUDGET_MS', 500, problems, { max: 29000 }) / 1000;
  // Transactional publish: one id per warm publishing container (docs/transactions.md). Unset,
  // the pool follows the publishing functions' reserved concurrency (deploy.cjs sizeTxnPool).
  const txnPoolSize = positive(env, 'TALLY_TXN_POOL_SIZE', undefined, problems, { max: 10000 });

  return {
    stage,
    region,
    local,
    production,
    apiAuth,
    downstreamClusterArn: problems.some((p) => p.startsWith('DOWNSTREAM_'))
      ? ''
      : downstreamClusterArn,
    email,
    webhookUrl,
    webhookSecretId,
    // Tables that hold what cannot be rebuilt: Retain, deletion protection and PITR, unless a
    // throwaway stage says TALLY_PROTECT_DATA=false.
    protectData: bool(env, 'TALLY_PROTECT_DATA', true, problems),
    reserve,
    limits,
    latencySeconds,
    txnPoolSize,
    downstreamPollers: {
      min: positive(env, 'DOWNSTREAM_MIN_POLLERS', 1, problems, { max: 200 }),
      max: positive(env, 'DOWNSTREAM_MAX_POLLERS', 2, problems, { max: 2000 }),
    },
    downstreamRetries: positive(env, 'DOWNSTREAM_MAX_RETRIES', 5, problems, { max: 10000 }),
    problems,
    warnings,
  };
}

module.exports = { readSettings, CLUSTER_ARN };
/** For serverless.yml: the downstream example's cluster, or a sentinel the plugin removes. */
module.exports.downstreamClusterArn = () =>
  text(process.env, 'DOWNSTREAM_MSK_CLUSTER_ARN') ||
  'arn:aws:kafka:us-east-1:000000000000:cluster/tally-downstream-unconfigured/none';
