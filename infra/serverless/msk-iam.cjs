// MSK IAM grants (kafka-cluster:*) per function, least privilege, as IAM statements that
// serverless.yml includes with ${file(./infra/serverless/msk-iam.cjs):<name>}. They name the
// cluster of MSK_CLUSTER_ARN (without it, a cluster named `unconfigured` that cannot exist: the
// statements are in the template either way, and grant nothing until the cluster is given).
//
// ARNs (MSK's IAM access control): cluster  arn:…:kafka:<region>:<account>:cluster/<name>/<uuid>
//                                   topic    arn:…:kafka:<region>:<account>:topic/<name>/<uuid>/<topic>
//                                   group    arn:…:kafka:<region>:<account>:group/<name>/<uuid>/<group>
'use strict';

const CLUSTER_ARN = /^arn:(aws[a-z-]*):kafka:([a-z0-9-]+):(\d{12}):cluster\/([^/]+)\/([^/]+)$/;

function cluster() {
  const arn = (process.env.MSK_CLUSTER_ARN || '').trim();
  if (arn === '') {
    return {
      cluster: {
        'Fn::Sub': `arn:\${AWS::Partition}:kafka:\${AWS::Region}:\${AWS::AccountId}:cluster/unconfigured/*`,
      },
      child: (kind, name) => ({
        'Fn::Sub': `arn:\${AWS::Partition}:kafka:\${AWS::Region}:\${AWS::AccountId}:${kind}/unconfigured/*/${name}`,
      }),
    };
  }
  const match = CLUSTER_ARN.exec(arn);
  if (!match)
    throw new Error(
      `MSK_CLUSTER_ARN: "${arn}" is not an MSK cluster ARN (arn:aws:kafka:<region>:<account>:cluster/<name>/<uuid>)`,
    );
  const [, partition, region, account, name, uuid] = match;
  const base = `arn:${partition}:kafka:${region}:${account}`;
  return {
    cluster: `${base}:cluster/${name}/${uuid}`,
    child: (kind, child) => `${base}:${kind}/${name}/${uuid}/${child}`,
  };
}

/** TALLY_TOPIC_ALLOW_LIST's patterns (`orders*` is a prefix); empty: every topic. */
function allowedTopics() {
  const list = (process.env.TALLY_TOPIC_ALLOW_LIST || '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  return list.length > 0 ? list : ['*'];
}

/** TALLY_TXN_ID_PREFIX: the transactional ids publish leases are `<prefix>-<n>`. */
const txnIdPrefix = () => (process.env.TALLY_TXN_ID_PREFIX || 'tally-publish').trim();

const canaryTopic = () => (process.env.TALLY_CANARY_TOPIC || 'tally-canary').trim();

/** Every function that talks to Kafka: connect, and the bootstrap brokers of the cluster. */
function connect(extra = []) {
  const { cluster: arn } = cluster();
  return {
    Effect: 'Allow',
    Action: [
      'kafka-cluster:Connect',
      'kafka-cluster:DescribeCluster',
      'kafka:GetBootstrapBrokers',
      ...extra,
    ],
    Resource: [arn],
  };
}

module.exports = {
  /** Reads the cluster's identity only (clusters, lookup). */
  connect: () => connect(),
  /** Publish: the idempotent producer, writing only to the allowed topics. */
  publishConnect: () => connect(['kafka-cluster:WriteDataIdempotently']),
  publishTopics: () => ({
    Effect: 'Allow',
    Action: [
      'kafka-cluster:DescribeTopic',
      'kafka-cluster:DescribeTopicDynamicConfiguration',
      'kafka-cluster:WriteData',
    ],
    Resource: allowedTopics().map((topic) => cluster().child('topic', topic)),
  }),
  /**
   * Transactional publish (docs/transactions.md): its leased ids only, initialised
   * (InitProducerId) and used for transactions.
   */
  publishTransactionalIds: () => ({
    Effect: 'Allow',
    Action: ['kafka-cluster:DescribeTransactionalId', 'kafka-cluster:AlterTransactionalId'],
    Resource: [cluster().child('transactional-id', `${txnIdPrefix()}*`)],
  }),
  /**
   * A keyed retry settling an earlier transaction reads its offsets with read_committed, on the
   * allowed topics, through a consumer group of its own (tally-settle-<random>).
   */
  publishSettleRead: () => ({
    Effect: 'Allow',
    Action: ['kafka-cluster:ReadData'],
    Resource: allowedTopics().map((topic) => cluster().child('topic', topic)),
  }),
  publishSettleGroups: () => ({
    Effect: 'Allow',
    Action: ['kafka-cluster:DescribeGroup', 'kafka-cluster:AlterGroup'],
    Resource: [cluster().child('group', 'tally-settle-*')],
  }),
  /**
   * The lookup route settling a transactional request's outcome (docs/transactions.md): the
   * allowed topics described and read (read_committed), no write.
   */
  settleReadTopics: () => ({
    Effect: 'Allow',
    Action: ['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData'],
    Resource: allowedTopics().map((topic) => cluster().child('topic', topic)),
  }),
  /** Reconcile and the Burrow / consumer-group reads: topics' offsets and groups' commits. */
  readGroups: () => ({
    Effect: 'Allow',
    Action: ['kafka-cluster:DescribeTopic', 'kafka-cluster:DescribeGroup'],
    Resource: [cluster().child('topic', '*'), cluster().child('group', '*')],
  }),
  /** The audit fan-out's plan: how many partitions a topic has, nothing read. */
  describeTopics: () => ({
    Effect: 'Allow',
    Action: ['kafka-cluster:DescribeTopic'],
    Resource: [cluster().child('topic', '*')],
  }),
  /** Restore and the offset-repair tasks: also commit a group's offsets. */
  alterGroups: () => ({
    Effect: 'Allow',
    Action: [
      'kafka-cluster:DescribeTopic',
      'kafka-cluster:DescribeGroup',
      'kafka-cluster:AlterGroup',
    ],
    Resource: [cluster().child('topic', '*'), cluster().child('group', '*')],
  }),
  /**
   * The audit's log read: records of any topic, through a consumer group of its own
   * (tally-audit-<random>), which it deletes after the read.
   */
  auditRead: () => ({
    Effect: 'Allow',
    Action: ['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData'],
    Resource: [cluster().child('topic', '*')],
  }),
  auditGroups: () => ({
    Effect: 'Allow',
    Action: [
      'kafka-cluster:DescribeGroup',
      'kafka-cluster:AlterGroup',
      'kafka-cluster:DeleteGroup',
    ],
    Resource: [cluster().child('group', 'tally-audit-*')],
  }),
  /** The canary: its own topic only (created on first use), written and read back. */
  canaryTopic: () => ({
    Effect: 'Allow',
    Action: [
      'kafka-cluster:CreateTopic',
      'kafka-cluster:DescribeTopic',
      'kafka-cluster:DescribeTopicDynamicConfiguration',
      'kafka-cluster:WriteData',
      'kafka-cluster:ReadData',
    ],
    Resource: [cluster().child('topic', canaryTopic())],
  }),
};
