'use strict';

// What `serverless package` / `deploy` creates beyond what serverless.yml can say (issue 29,
// docs/deploy.md). Listed after serverless-iam-roles-per-function, whose roles it edits.
//
// At `initialize` (package and deploy of any stage but `local`): refuses a half-configured
// deployment, naming every variable to set (deploy-config.cjs).
// At `before:package:compileEvents`: the downstream example's MSK event only with a cluster.
// Before the template is saved (with serverless.yml's resources merged in):
// - the HTTP API's authorization (AWS_IAM by default, or the JWT authorizer);
// - stage and route throttling, and reserved concurrency per function, sized together;
// - Retain, deletion protection and point-in-time recovery on the tables that cannot be rebuilt;
// - the MSK event source mapping: partial batch responses, provisioned pollers, bounded retries,
//   an on-failure queue, and the consumer group's kafka-cluster grants;
// - alarms on every function, the API, the state machines, the canary and the tables, shown on
//   the dashboard, and the alarm topic as an output;
// - no shared role nobody uses, the VPC policy only on functions in a VPC, the SCRAM secret's
//   grants only with KAFKA_AUTH=scram on functions that reach a broker, no conditional resource
//   that is off (and no condition that is always false), no redundant DependsOn.

const { readSettings } = require('./deploy-config.cjs');

/** Tables whose loss loses what cannot be rebuilt (ledger, streams, receipts, once, audits, keyed publishes). */
const PROTECTED_TABLES = [
  'StreamsTable',
  'LedgerTable',
  'ReservationsTable',
  'ReceiptsTable',
  'AuditsTable',
  'OnceTable',
  // Live leases: recreated empty, two containers could lease one id at once.
  'TxnIdsTable',
];

/** HTTP functions by the rate class their routes share (deploy-config.cjs `limits`). */
const HTTP_CLASS = {
  produce: 'publish',
  produceBatch: 'publish',
  produceV2: 'publish',
  receipts: 'receipts',
  reconcileNow: 'admin',
  restore: 'admin',
  acknowledge: 'admin',
  auditNow: 'admin',
  approve: 'admin',
};
/** Functions no route calls: schedules, state machine tasks (their Map's MaxConcurrency), MSK. */
const TASK_CONCURRENCY = {
  reconcile: 4,
  audit: 4,
  canary: 2,
  fanOutChild: 50,
  reconcileFanOutChild: 16,
  publishRecord: 4,
  downstreamExample: 10,
};
const DEFAULT_TASK_CONCURRENCY = 5;

const SENTINEL_CLUSTER = /cluster\/tally-downstream-unconfigured\//;

const upperFirst = (name) => name.charAt(0).toUpperCase() + name.slice(1);
const functionId = (name) => `${upperFirst(name).replace(/[-_]/g, 'Dash')}LambdaFunction`;
const kebab = (name) => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

/** Logical ids a value refers to (Ref, Fn::GetAtt). */
function referenced(value, found = new Set()) {
  if (Array.isArray(value)) for (const item of value) referenced(item, found);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'Ref' && typeof inner === 'string') found.add(inner);
      else if (key === 'Fn::GetAtt')
        found.add(Array.isArray(inner) ? inner[0] : String(inner).split('.')[0]);
      else referenced(inner, found);
    }
  }
  return found;
}

class TallyDeploy {
  constructor(serverless, options, { log } = {}) {
    this.serverless = serverless;
    this.options = options;
    this.log = log ?? { warning: (m) => console.warn(m), notice: (m) => console.log(m) };
    this.hooks = {
      initialize: () => this.refuseHalfConfigured(),
      'before:package:compileEvents': () => this.dropUnconfiguredMskEvents(),
      // After the resources of serverless.yml are merged in, before the template is saved.
      'before:aws:package:finalize:saveServiceState': () => this.finalize(),
    };
  }

  get settings() {
    if (!this._settings) {
      const provider = this.serverless.service.provider;
      const stage = this.options.stage ?? provider.stage;
      const region = this.options.region ?? provider.region;
      this._settings = readSettings(process.env, stage, region);
    }
    return this._settings;
  }

  refuseHalfConfigured() {
    const command = this.serverless.processedInput?.commands?.[0];
    if (command !== 'package' && command !== 'deploy') return;
    const settings = this.settings;
    if (settings.local) return;
    for (const warning of settings.warnings) this.log.warning(`Tally: ${warning}`);
    const auth =
      settings.apiAuth === 'iam'
        ? 'API authorization: AWS_IAM (SigV4), the default; TALLY_API_AUTH=jwt with TALLY_JWT_ISSUER and TALLY_JWT_AUDIENCE for JWT'
        : 'API authorization: JWT';
    if (settings.problems.length > 0) {
      const lines = [...settings.problems.map((p) => `  - ${p}`), `(${auth})`].join('\n');
      throw new this.serverless.classes.Error(
        `Tally: stage "${settings.stage}" is not configured to deploy (docs/deploy.md "Configuration"). Set:\n${lines}`,
      );
    }
  }

  dropUnconfiguredMskEvents() {
    this.unconfiguredConsumers = [];
    for (const [name, fn] of Object.entries(this.serverless.service.functions ?? {})) {
      if (!Array.isArray(fn.events)) continue;
      const events = fn.events.filter(
        (event) => !(event.msk && SENTINEL_CLUSTER.test(String(event.msk.arn))),
      );
      if (events.length < fn.events.length) this.unconfiguredConsumers.push(name);
      fn.events = events;
    }
  }

  finalize() {
    const template = this.serverless.service.provider.compiledCloudFormationTemplate;
    const settings = this.settings;
    const service = this.serverless.service.service;
    const functions = this.serverless.service.functions ?? {};
    if (settings.local) return;
    applyApiAuth(template, settings);
    applyBackPressure(template, settings, functions);
    const pool = sizeTxnPool(template, settings, functions);
    if (pool.problem) {
      throw new this.serverless.classes.Error(
        `Tally: stage "${settings.stage}" is not configured to deploy (docs/deploy.md "Configuration"). Set:\n  - ${pool.problem}`,
      );
    }
    if (pool.warning) this.log.warning(`Tally: ${pool.warning}`);
    protectTables(template, settings);
    configureMskConsumer(template, settings, this.unconfiguredConsumers ?? []);
    dropUnused(template, functions);
    dropUnusedScramGrants(template, functions, process.env.KAFKA_AUTH?.trim() === 'scram');
    addAlarms(template, settings, service, functions);
    dropRedundantDependsOn(template);
  }
}

function applyApiAuth(template, settings) {
  const resources = template.Resources;
  if (settings.apiAuth !== 'iam') return;
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type === 'AWS::ApiGatewayV2::Authorizer') delete resources[id];
    if (resource.Type !== 'AWS::ApiGatewayV2::Route') continue;
    resource.Properties.AuthorizationType = 'AWS_IAM';
    delete resource.Properties.AuthorizerId;
    delete resource.Properties.AuthorizationScopes;
  }
}

/** Each HTTP function's routes, as `METHOD /path` route keys. */
function routesOf(fn) {
  return (fn.events ?? [])
    .filter((event) => event.httpApi)
    .map(({ httpApi }) => `${String(httpApi.method).toUpperCase()} ${httpApi.path}`);
}

function applyBackPressure(template, settings, functions) {
  const resources = template.Resources;
  const stage = Object.values(resources).find((r) => r.Type === 'AWS::ApiGatewayV2::Stage');
  const routeSettings = {};
  let total = 0;
  for (const [name, fn] of Object.entries(functions)) {
    const routes = routesOf(fn);
    let reserved = TASK_CONCURRENCY[name] ?? DEFAULT_TASK_CONCURRENCY;
    if (routes.length > 0) {
      // The function's rate is shared by its routes; its concurrency covers that rate at the
      // latency budget, so the gateway's 429 comes first.
      const rate = settings.limits[HTTP_CLASS[name] ?? 'read'];
      for (const key of routes) {
        // Rounded down, so the routes together never pass the rate the concurrency covers.
        const perRoute = Math.max(Math.floor((rate / routes.length) * 100) / 100, 0.1);
        routeSettings[key] = {
          ThrottlingRateLimit: perRoute,
          ThrottlingBurstLimit: Math.max(1, Math.ceil(perRoute * 2)),
        };
      }
      // Admin calls (a reconcile or an audit now) may run to the function's timeout.
      const seconds =
        HTTP_CLASS[name] === 'admin' ? Number(fn.timeout ?? 29) : settings.latencySeconds;
      reserved = Math.max(1, Math.ceil(rate * seconds - 1e-9));
    }
    const resource = resources[functionId(name)];
    if (resource && settings.reserve) {
      resource.Properties.ReservedConcurrentExecutions = reserved;
      total += reserved;
    }
  }
  if (stage) {
    const sum = Object.values(routeSettings).reduce((s, r) => s + r.ThrottlingRateLimit, 0);
    stage.Properties.DefaultRouteSettings = {
      ...stage.Properties.DefaultRouteSettings,
      ThrottlingRateLimit: Math.ceil(sum),
      ThrottlingBurstLimit: Math.ceil(sum * 2),
    };
    stage.Properties.RouteSettings = routeSettings;
    // Route settings name routes that must exist first.
    const routes = Object.entries(resources)
      .filter(([, r]) => r.Type === 'AWS::ApiGatewayV2::Route')
      .map(([id]) => id);
    stage.DependsOn = [...new Set([...[stage.DependsOn ?? []].flat(), ...routes])];
  }
  template.Metadata = { ...template.Metadata, TallyReservedConcurrency: total };
}

/**
 * Functions whose containers may each lease a transactional id (functions/publishing/runtime.ts:
 * the HTTP publish routes, the workflow's publish task, the canary).
 */
const TXN_PUBLISHERS = ['produce', 'produceBatch', 'produceV2', 'publishRecord', 'canary'];
/** The pool's size with no reserved concurrency to follow (functions/platform/config.ts). */
const DEFAULT_TXN_POOL_SIZE = 64;

/**
 * TALLY_TXN_POOL_SIZE on every function that leases from the pool: at least as many ids as
 * containers that may publish at once, so a transactional request never finds every id leased
 * while its function is inside its reserved concurrency. Unset, it is that sum and a quarter. Returns a
 * problem when a size set is below it, and a warning when there is no reserved concurrency to
 * size it by.
 */
function sizeTxnPool(template, settings, functions) {
  const resources = template.Resources;
  const publishers = TXN_PUBLISHERS.filter(
    (name) => functions[name] && resources[functionId(name)],
  );
  const reserved = publishers.map((name) => ({
    name,
    reserved: resources[functionId(name)].Properties.ReservedConcurrentExecutions,
  }));
  const bounded = settings.reserve && reserved.every((r) => Number.isInteger(r.reserved));
  const need = bounded ? reserved.reduce((sum, r) => sum + r.reserved, 0) : undefined;
  // Unset: the sum, and a quarter more for containers Lambda retired with a lease still
  // unexpired (a lease lapses TALLY_TXN_LEASE_SECONDS after its last renewal).
  const size =
    settings.txnPoolSize ?? (need !== undefined ? Math.ceil(need * 1.25) : DEFAULT_TXN_POOL_SIZE);
  for (const resource of Object.values(resources)) {
    const variables =
      resource.Type === 'AWS::Lambda::Function' && resource.Properties.Environment?.Variables;
    if (variables && variables.TALLY_TXN_ID_PREFIX !== undefined) {
      variables.TALLY_TXN_POOL_SIZE = String(size);
    }
  }
  template.Metadata = { ...template.Metadata, TallyTxnPoolSize: size };
  if (need !== undefined && size < need) {
    const each = reserved.map((r) => `${r.name} ${r.reserved}`).join(', ');
    return {
      problem: `TALLY_TXN_POOL_SIZE: ${size} ids is fewer than the ${need} containers that may publish at once (reserved concurrency: ${each}); a transactional request that finds every id leased answers 503 NOT_SENT. Set it to at least ${need}, or unset it (it then follows the reserved concurrency), or lower TALLY_PUBLISH_RATE_LIMIT`,
    };
  }
  if (need === undefined && settings.txnPoolSize === undefined) {
    return {
      warning: `TALLY_TXN_POOL_SIZE: ${DEFAULT_TXN_POOL_SIZE} ids (the default): with TALLY_RESERVED_CONCURRENCY=false nothing bounds the publishing containers; set it to their expected peak if topics are transactional (docs/transactions.md)`,
    };
  }
  return {};
}

function protectTables(template, settings) {
  if (!settings.protectData) return;
  for (const id of PROTECTED_TABLES) {
    const table = template.Resources[id];
    if (!table) continue;
    table.DeletionPolicy = 'Retain';
    table.UpdateReplacePolicy = 'Retain';
    table.Properties.DeletionProtectionEnabled = true;
    table.Properties.PointInTimeRecoverySpecification = { PointInTimeRecoveryEnabled: true };
  }
}

function configureMskConsumer(template, settings, unconfiguredConsumers) {
  const resources = template.Resources;
  const mappings = Object.entries(resources).filter(
    ([, r]) => r.Type === 'AWS::Lambda::EventSourceMapping',
  );
  for (const name of unconfiguredConsumers) {
    const role = resources[resources[functionId(name)]?.Properties.Role?.['Fn::GetAtt']?.[0]];
    const statements = role?.Properties.Policies?.[0]?.PolicyDocument.Statement;
    if (!statements) continue;
    // No event source: none of the grants its polling needs (the cluster's brokers, the VPC's
    // network interfaces) — a statement naming the unconfigured cluster grants nothing.
    role.Properties.Policies[0].PolicyDocument.Statement = statements.filter(
      (s) => ![s.Action].flat().some((a) => /^(kafka|ec2):/.test(a)),
    );
  }
  for (const [id, mapping] of mappings) {
    const p = mapping.Properties;
    const fnId = p.FunctionName?.['Fn::GetAtt']?.[0];
    const fnName = fnId?.replace(/LambdaFunction$/, '');
    const queueId = `${fnName}FailuresQueue`;
    resources[queueId] = {
      Type: 'AWS::SQS::Queue',
      Properties: { MessageRetentionPeriod: 1209600, SqsManagedSseEnabled: true },
    };
    Object.assign(p, {
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ProvisionedPollerConfig: {
        MinimumPollers: settings.downstreamPollers.min,
        MaximumPollers: Math.max(settings.downstreamPollers.min, settings.downstreamPollers.max),
      },
      MaximumRetryAttempts: settings.downstreamRetries,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
    });
    const clusterArn = p.EventSourceArn;
    const [, base, path] = /^(arn:[^:]+:kafka:[^:]+:\d+):cluster\/(.+)$/.exec(clusterArn) ?? [];
    const roleId = resources[fnId]?.Properties.Role?.['Fn::GetAtt']?.[0];
    const statements = resources[roleId]?.Properties.Policies?.[0]?.PolicyDocument.Statement;
    if (!statements || !base) throw new Error(`tally deploy: cannot grant ${id}'s consumer group`);
    const group = p.AmazonManagedKafkaEventSourceConfig?.ConsumerGroupId;
    statements.push(
      {
        Effect: 'Allow',
        Action: ['kafka-cluster:Connect', 'kafka-cluster:DescribeClusterDynamicConfiguration'],
        Resource: [clusterArn],
      },
      {
        Effect: 'Allow',
        Action: ['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData'],
        Resource: p.Topics.map((topic) => `${base}:topic/${path}/${topic}`),
      },
      {
        Effect: 'Allow',
        Action: ['kafka-cluster:DescribeGroup', 'kafka-cluster:AlterGroup'],
        Resource: [`${base}:group/${path}/${group}`],
      },
      {
        Effect: 'Allow',
        Action: ['sqs:SendMessage'],
        Resource: [{ 'Fn::GetAtt': [queueId, 'Arn'] }],
      },
    );
  }
}

function dropUnused(template, functions) {
  const resources = template.Resources;
  // The shared role serverless makes: every function has its own (serverless-iam-roles-per-function).
  const others = JSON.stringify({
    ...resources,
    IamRoleLambdaExecution: undefined,
    ...template.Outputs,
  });
  if (resources.IamRoleLambdaExecution && !others.includes('"IamRoleLambdaExecution"')) {
    delete resources.IamRoleLambdaExecution;
  }
  // The VPC policy only where a function runs in a VPC.
  for (const name of Object.keys(functions)) {
    const fn = resources[functionId(name)];
    const role = resources[fn?.Properties.Role?.['Fn::GetAtt']?.[0]];
    if (!fn || !role) continue;
    const inVpc = (fn.Properties.VpcConfig?.SubnetIds ?? []).length > 0;
    if (!inVpc) {
      if (fn.Properties.VpcConfig) delete fn.Properties.VpcConfig;
      const managed = (role.Properties.ManagedPolicyArns ?? []).filter(
        (arn) => !JSON.stringify(arn).includes('AWSLambdaVPCAccessExecutionRole'),
      );
      if (managed.length > 0) role.Properties.ManagedPolicyArns = managed;
      else delete role.Properties.ManagedPolicyArns;
    }
  }
  // Conditional resources that are off, and conditions that are constants.
  const conditions = template.Conditions ?? {};
  for (const [name, condition] of Object.entries(conditions)) {
    const equals = condition['Fn::Not']?.[0]?.['Fn::Equals'];
    if (!Array.isArray(equals) || !equals.every((v) => typeof v === 'string')) continue;
    const on = equals[0] !== equals[1];
    for (const [id, resource] of Object.entries(resources)) {
      if (resource.Condition !== name) continue;
      if (on) delete resource.Condition;
      else delete resources[id];
    }
    delete conditions[name];
  }
  if (template.Conditions && Object.keys(template.Conditions).length === 0)
    delete template.Conditions;
}

/**
 * The SCRAM credentials' grants (provider.iam.role.statements, inherited by every role): only
 * with KAFKA_AUTH=scram, and only on functions that reach a broker (serverless.yml puts each of
 * those in the Kafka VPC, `vpc:`; the others have none). KMS through Secrets Manager or SSM stays
 * while the role still reads a secret or parameter (the schema registry's).
 */
function dropUnusedScramGrants(template, functions, scram) {
  const resources = template.Resources;
  const isScramRead = (s) =>
    [s.Action]
      .flat()
      .some((a) => a === 'secretsmanager:GetSecretValue' || a === 'ssm:GetParameter') &&
    /secret:AmazonMSK_|parameter\//.test(JSON.stringify(s.Resource));
  for (const [name, fn] of Object.entries(functions)) {
    if (scram && fn.vpc !== undefined) continue;
    const role = resources[resources[functionId(name)]?.Properties.Role?.['Fn::GetAtt']?.[0]];
    const policy = role?.Properties.Policies?.[0]?.PolicyDocument;
    if (!policy) continue;
    const kept = policy.Statement.filter((s) => !isScramRead(s));
    const reads = kept.some((s) =>
      [s.Action]
        .flat()
        .some((a) => a === 'secretsmanager:GetSecretValue' || a === 'ssm:GetParameter'),
    );
    policy.Statement = reads
      ? kept
      : kept.filter((s) => ![s.Action].flat().includes('kms:Decrypt'));
  }
}

function alarm(topic, properties) {
  return {
    Type: 'AWS::CloudWatch::Alarm',
    Properties: {
      EvaluationPeriods: 1,
      DatapointsToAlarm: 1,
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
      TreatMissingData: 'notBreaching',
      ...properties,
      AlarmActions: [{ Ref: topic }],
      OKActions: [{ Ref: topic }],
    },
  };
}

function addAlarms(template, settings, service, functions) {
  const resources = template.Resources;
  const topic = 'NotificationsTopic';
  if (!resources[topic]) return;
  const prefix = `${service}-${settings.stage}`;
  const added = {};
  const existing = new Set(
    Object.values(resources)
      .filter((r) => r.Type === 'AWS::CloudWatch::Alarm')
      .map((r) => r.Properties.AlarmName),
  );
  const add = (id, properties) => {
    const name = `${prefix}-${properties.AlarmName}`;
    // serverless.yml's own alarms (the local stack evaluates them) are kept as they are.
    if (existing.has(name)) return;
    added[id] = alarm(topic, { ...properties, AlarmName: name });
  };
  for (const name of Object.keys(functions)) {
    const fnId = functionId(name);
    if (!resources[fnId]) continue;
    for (const metric of ['Errors', 'Throttles']) {
      add(`${fnId.replace(/LambdaFunction$/, '')}${metric}Alarm`, {
        AlarmName: `${name}-${metric.toLowerCase()}`,
        AlarmDescription: `${name}: ${metric === 'Errors' ? 'invocations failed' : 'invocations throttled (reserved concurrency reached)'}`,
        Namespace: 'AWS/Lambda',
        MetricName: metric,
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: fnId } }],
        Statistic: 'Sum',
        Period: 300,
      });
    }
  }
  if (resources.HttpApi) {
    add('Api5xxAlarm', {
      AlarmName: 'api-5xx',
      AlarmDescription:
        'The HTTP API answered 5xx (Tally failed, or a function was throttled or timed out)',
      Namespace: 'AWS/ApiGateway',
      MetricName: '5xx',
      Dimensions: [{ Name: 'ApiId', Value: { Ref: 'HttpApi' } }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 5,
    });
    add('ApiLatencyAlarm', {
      AlarmName: 'api-latency',
      AlarmDescription: 'The HTTP API p99 latency over 5 s for 15 minutes',
      Namespace: 'AWS/ApiGateway',
      MetricName: 'Latency',
      Dimensions: [{ Name: 'ApiId', Value: { Ref: 'HttpApi' } }],
      ExtendedStatistic: 'p99',
      Period: 300,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      Threshold: 5000,
    });
  }
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type === 'AWS::StepFunctions::StateMachine') {
      const short = id.replace(/StateMachine$/, '');
      for (const metric of ['ExecutionsFailed', 'ExecutionsTimedOut']) {
        add(`${short}${metric}Alarm`, {
          AlarmName: `${kebab(short)}-${metric.replace('Executions', '').toLowerCase()}`,
          AlarmDescription: `State machine ${short}: executions ${metric === 'ExecutionsFailed' ? 'failed' : 'timed out'}`,
          Namespace: 'AWS/States',
          MetricName: metric,
          Dimensions: [{ Name: 'StateMachineArn', Value: { Ref: id } }],
          Statistic: 'Sum',
          Period: 300,
        });
      }
    }
    if (resource.Type === 'AWS::DynamoDB::Table') {
      const short = id.replace(/Table$/, '');
      add(`${id}ThrottlesAlarm`, {
        AlarmName: `table-${kebab(short)}-throttles`,
        AlarmDescription: `Table ${short}: requests throttled`,
        Metrics: [
          ...['ReadThrottleEvents', 'WriteThrottleEvents'].map((metric, i) => ({
            Id: `m${i}`,
            MetricStat: {
              Metric: {
                Namespace: 'AWS/DynamoDB',
                MetricName: metric,
                Dimensions: [{ Name: 'TableName', Value: { Ref: id } }],
              },
              Period: 300,
              Stat: 'Sum',
            },
            ReturnData: false,
          })),
          {
            Id: 'throttles',
            Expression: 'FILL(m0, 0) + FILL(m1, 0)',
            Label: 'throttled requests',
            ReturnData: true,
          },
        ],
      });
    }
    if (resource.Type === 'AWS::SQS::Queue' && /FailuresQueue$/.test(id)) {
      add(`${id}Alarm`, {
        AlarmName: kebab(id.replace(/Queue$/, '')),
        AlarmDescription:
          'Records the MSK event source gave up on (retries exhausted) wait in the failures queue',
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [id, 'QueueName'] } }],
        Statistic: 'Maximum',
        Period: 300,
      });
    }
  }
  // The canary: a run that is not all ACKED, or none at all (missing data breaches), and its
  // read-back lag.
  add('CanaryAvailabilityAlarm', {
    AlarmName: 'canary-availability',
    AlarmDescription:
      'The canary published with less than 100 % ACKED, or did not run, for 10 minutes',
    Metrics: [
      {
        Id: 'availability',
        Expression: 'SELECT MIN(CanaryAvailability) FROM SCHEMA("Tally", service, topic)',
        Period: 300,
        ReturnData: true,
      },
    ],
    ComparisonOperator: 'LessThanThreshold',
    Threshold: 100,
    EvaluationPeriods: 2,
    DatapointsToAlarm: 2,
    TreatMissingData: 'breaching',
  });
  add('CanaryLagAlarm', {
    AlarmName: 'canary-lag',
    AlarmDescription: 'The canary read its records back more than 60 s after publishing them',
    Metrics: [
      {
        Id: 'lag',
        Expression: 'SELECT MAX(CanaryReadBackMs) FROM SCHEMA("Tally", service, topic)',
        Period: 300,
        ReturnData: true,
      },
    ],
    Threshold: 60000,
    TreatMissingData: 'ignore',
  });
  Object.assign(resources, added);
  showOnDashboard(resources);
  template.Outputs = {
    ...template.Outputs,
    AlarmTopicArn: {
      Description:
        'The SNS topic every alarm and notification goes to: subscribe whoever must know',
      Value: { Ref: topic },
    },
  };
}

function showOnDashboard(resources) {
  const dashboard = resources.Dashboard;
  const sub = dashboard?.Properties.DashboardBody?.['Fn::Sub'];
  if (!Array.isArray(sub)) return;
  const body = JSON.parse(sub[0]);
  const arn = (name) =>
    `arn:\${AWS::Partition}:cloudwatch:\${AWS::Region}:\${AWS::AccountId}:alarm:${name}`;
  const alarms = Object.values(resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
  const names = alarms.map((a) => a.Properties.AlarmName);
  const functionAlarms = alarms
    .filter((a) => a.Properties.Namespace === 'AWS/Lambda')
    .map((a) => a.Properties.AlarmName);
  const others = names.filter((n) => !functionAlarms.includes(n));
  let y = Math.max(0, ...body.widgets.map((w) => w.y + w.height));
  const widget = (title, list, height) => {
    const w = {
      type: 'alarm',
      x: 0,
      y,
      width: 24,
      height,
      properties: { title, alarms: list.map(arn), sortBy: 'stateUpdatedTimestamp' },
    };
    y += height;
    return w;
  };
  body.widgets.push(
    widget('Alarms: service, API, state machines, canary, tables', others.slice(0, 100), 6),
  );
  if (functionAlarms.length > 0)
    body.widgets.push(
      widget('Alarms: functions (errors, throttles)', functionAlarms.slice(0, 100), 8),
    );
  if (resources.HttpApi) {
    // Fn::Sub's own placeholders, not JavaScript's.
    const region = '$' + '{AWS::Region}';
    const api = '$' + '{api}';
    body.widgets.push({
      type: 'metric',
      x: 0,
      y,
      width: 24,
      height: 6,
      properties: {
        title: 'API: 5xx, 4xx (incl. 429 throttled) and p99 latency',
        region,
        period: 300,
        metrics: [
          ['AWS/ApiGateway', '5xx', 'ApiId', api, { stat: 'Sum' }],
          ['AWS/ApiGateway', '4xx', 'ApiId', api, { stat: 'Sum' }],
          ['AWS/ApiGateway', 'Latency', 'ApiId', api, { stat: 'p99', yAxis: 'right' }],
        ],
      },
    });
    sub[1] = { ...sub[1], api: { Ref: 'HttpApi' } };
  }
  sub[0] = JSON.stringify(body, null, 1);
}

function dropRedundantDependsOn(template) {
  for (const resource of Object.values(template.Resources)) {
    if (!resource.DependsOn) continue;
    const refs = referenced(resource.Properties);
    const kept = [resource.DependsOn]
      .flat()
      .filter((id) => !refs.has(id) && template.Resources[id]);
    if (kept.length === 0) delete resource.DependsOn;
    else resource.DependsOn = kept.length === 1 ? kept[0] : kept;
  }
}

module.exports = TallyDeploy;
module.exports.PROTECTED_TABLES = PROTECTED_TABLES;
module.exports.dropUnusedScramGrants = dropUnusedScramGrants;
module.exports.sizeTxnPool = sizeTxnPool;
