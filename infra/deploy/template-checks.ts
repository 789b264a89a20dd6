// Tally's own checks of a packaged CloudFormation template (`npm run deploy:check`, and the
// tests of test/integration/deploy-template.test.ts): what cfn-lint cannot know — that a deploy
// would work, keep its data and tell someone when it does not (issue 29, docs/deploy.md).

type Json = Record<string, unknown>;
export interface Resource {
  Type: string;
  Properties: Json;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  Condition?: string;
  DependsOn?: string | string[];
}
export interface Template {
  Resources: Record<string, Resource>;
  Outputs?: Record<string, { Value: unknown }>;
  Conditions?: Record<string, unknown>;
}
export interface Finding {
  readonly check: string;
  readonly resource?: string;
  readonly message: string;
}
export interface CheckOptions {
  /** A production stage: its alarm topic must have a subscription (or one made elsewhere). */
  readonly production: boolean;
  /** TALLY_NOTIFY_SUBSCRIBED=true: the alarm topic is subscribed outside the stack. */
  readonly externallySubscribed?: boolean;
  /** TALLY_PROTECT_DATA=false (a throwaway stage): no Retain, protection or PITR expected. */
  readonly protectData?: boolean;
  /** KAFKA_AUTH=scram: the functions that reach a broker may read the SCRAM credentials. */
  readonly scram?: boolean;
  /** The latency each HTTP function's reserved concurrency is sized for, in seconds. */
  readonly latencySeconds?: number;
}

/** Tables that hold what cannot be rebuilt (infra/serverless/deploy.cjs PROTECTED_TABLES). */
export const PROTECTED_TABLES = [
  'StreamsTable',
  'LedgerTable',
  'ReservationsTable',
  'ReceiptsTable',
  'AuditsTable',
  'OnceTable',
  // Live leases: recreated empty, two containers could lease one id at once.
  'TxnIdsTable',
];
/** What a consumer group needs of an IAM cluster (MSK's IAM access control). */
export const CONSUMER_ACTIONS = [
  'kafka-cluster:AlterGroup',
  'kafka-cluster:Connect',
  'kafka-cluster:DescribeClusterDynamicConfiguration',
  'kafka-cluster:DescribeGroup',
  'kafka-cluster:DescribeTopic',
  'kafka-cluster:ReadData',
];
/** Functions that talk to no Kafka broker: no kafka-cluster grant is theirs to use. */
const NO_KAFKA = [
  'OpenapiLambdaFunction',
  'VerifyPublishedLambdaFunction',
  'ReconcileFanOutMergeLambdaFunction',
];
const PLACEHOLDERS = /example\.invalid|11111111-2222-3333-4444-555555555555|unconfigured/;

/** AWS CloudFormation and service quotas the template must stay under. */
export const LIMITS = {
  templateBytes: 1_000_000,
  resources: 500,
  outputs: 200,
  /** IAM: the inline policies of a role, together, in characters (whitespace excluded). */
  rolePolicyChars: 10_240,
  /** Lambda: a function's environment variables, together. */
  environmentBytes: 4_096,
  /** A CloudWatch alarm widget lists at most 100 alarms. */
  alarmsPerWidget: 100,
};

type Statement = {
  Effect: string;
  Action: string | string[];
  Resource?: unknown;
  Condition?: Json;
};
const actionsOf = (s: Statement) => [s.Action].flat();
const getAtt = (value: unknown): string | undefined =>
  (value as { 'Fn::GetAtt'?: string[] } | undefined)?.['Fn::GetAtt']?.[0];

export function ofType(template: Template, type: string): Array<[string, Resource]> {
  return Object.entries(template.Resources).filter(([, r]) => r.Type === type);
}

export function statementsOf(template: Template, roleId: string | undefined): Statement[] {
  const role = roleId ? template.Resources[roleId] : undefined;
  const policies = (role?.Properties.Policies ?? []) as Array<{
    PolicyDocument: { Statement: Statement[] };
  }>;
  return policies.flatMap((p) => p.PolicyDocument.Statement);
}

export function roleOfFunction(template: Template, functionId: string): string | undefined {
  return getAtt(template.Resources[functionId]?.Properties.Role);
}

/** Resources by type, sorted by type: what a deploy would create. */
export function resourcesByType(template: Template): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of Object.values(template.Resources)) counts[r.Type] = (counts[r.Type] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

/** Every finding on the template; none means every check passed. */
export function checkTemplate(template: Template, options: CheckOptions): Finding[] {
  const findings: Finding[] = [];
  const find = (check: string, message: string, resource?: string) =>
    findings.push({ check, message, ...(resource !== undefined && { resource }) });
  checkLimits(template, find);
  checkApi(template, options, find);
  checkMskConsumer(template, find);
  checkTables(template, options, find);
  checkAlarms(template, options, find);
  checkGrants(template, options, find);
  return findings;
}

type Find = (check: string, message: string, resource?: string) => void;

function checkLimits(template: Template, find: Find) {
  const bytes = Buffer.byteLength(JSON.stringify(template));
  if (bytes > LIMITS.templateBytes)
    find('limits', `template is ${bytes} bytes (CloudFormation: 1 MB)`);
  const resources = Object.keys(template.Resources).length;
  if (resources > LIMITS.resources) find('limits', `${resources} resources (CloudFormation: 500)`);
  const outputs = Object.keys(template.Outputs ?? {}).length;
  if (outputs > LIMITS.outputs) find('limits', `${outputs} outputs (CloudFormation: 200)`);
  for (const [id, role] of ofType(template, 'AWS::IAM::Role')) {
    const chars = JSON.stringify(role.Properties.Policies ?? []).replace(/\s/g, '').length;
    if (chars > LIMITS.rolePolicyChars)
      find('limits', `inline policies of ${chars} characters (IAM: 10,240)`, id);
  }
  for (const [id, fn] of ofType(template, 'AWS::Lambda::Function')) {
    const variables =
      (fn.Properties.Environment as { Variables?: Json } | undefined)?.Variables ?? {};
    const size = Object.entries(variables).reduce(
      (sum, [k, v]) =>
        sum + k.length + (typeof v === 'string' ? v.length : JSON.stringify(v).length),
      0,
    );
    if (size > LIMITS.environmentBytes)
      find('limits', `environment of ${size} bytes (Lambda: 4 KB)`, id);
  }
}

function checkApi(template: Template, options: CheckOptions, find: Find) {
  const routes = ofType(template, 'AWS::ApiGatewayV2::Route');
  for (const [id, route] of routes) {
    const type = route.Properties.AuthorizationType;
    if (type !== 'AWS_IAM' && type !== 'JWT')
      find('api-auth', `route ${route.Properties.RouteKey} has authorization ${String(type)}`, id);
  }
  for (const [id, authorizer] of ofType(template, 'AWS::ApiGatewayV2::Authorizer')) {
    const jwt = authorizer.Properties.JwtConfiguration as
      | { Issuer?: string; Audience?: string[] }
      | undefined;
    if (!jwt?.Issuer || PLACEHOLDERS.test(jwt.Issuer) || !(jwt.Audience ?? []).length)
      find('api-auth', `JWT issuer/audience not configured (${jwt?.Issuer ?? 'none'})`, id);
  }
  if (routes.length === 0) return;
  const [stageId, stage] = ofType(template, 'AWS::ApiGatewayV2::Stage')[0] ?? [];
  const defaults = stage?.Properties.DefaultRouteSettings as Json | undefined;
  if (!(Number(defaults?.ThrottlingRateLimit) > 0) || !(Number(defaults?.ThrottlingBurstLimit) > 0))
    find('throttling', 'the HTTP API stage has no default throttling', stageId);
  const perRoute = (stage?.Properties.RouteSettings ?? {}) as Record<string, Json>;
  // Each function's routes' rates, to size its concurrency against.
  const rateOf: Record<string, number> = {};
  const integrations = Object.fromEntries(
    ofType(template, 'AWS::ApiGatewayV2::Integration').map(([id, i]) => [
      id,
      getAtt(i.Properties.IntegrationUri),
    ]),
  );
  for (const [id, route] of routes) {
    const key = String(route.Properties.RouteKey);
    const limit = Number(perRoute[key]?.ThrottlingRateLimit) || 0;
    if (!(limit > 0)) find('throttling', `route ${key} has no rate limit`, id);
    const target = JSON.stringify(route.Properties.Target);
    const integration = /"Ref":"([^"]+)"/.exec(target)?.[1];
    const fn = integration ? integrations[integration] : undefined;
    if (fn) rateOf[fn] = (rateOf[fn] ?? 0) + limit;
  }
  for (const [id, fn] of ofType(template, 'AWS::Lambda::Function')) {
    const reserved = Number(fn.Properties.ReservedConcurrentExecutions);
    if (!(reserved > 0)) {
      find('concurrency', 'no reserved concurrency', id);
      continue;
    }
    const rate = rateOf[id];
    const needed = Math.ceil((rate ?? 0) * (options.latencySeconds ?? 0.5) - 1e-9);
    if (rate !== undefined && reserved < needed)
      find(
        'concurrency',
        `reserved ${reserved} < ${needed} (its routes' ${rate} req/s × the latency budget): Lambda would throttle before the gateway`,
        id,
      );
  }
}

function checkMskConsumer(template: Template, find: Find) {
  for (const [id, mapping] of ofType(template, 'AWS::Lambda::EventSourceMapping')) {
    const p = mapping.Properties;
    if (PLACEHOLDERS.test(JSON.stringify(p.EventSourceArn)))
      find('msk-consumer', `reads a placeholder cluster ${JSON.stringify(p.EventSourceArn)}`, id);
    if (
      !((p.FunctionResponseTypes as string[] | undefined) ?? []).includes('ReportBatchItemFailures')
    )
      find(
        'msk-consumer',
        'no ReportBatchItemFailures: a record the handler reports failed is committed anyway',
        id,
      );
    if (!p.ProvisionedPollerConfig) find('msk-consumer', 'no ProvisionedPollerConfig', id);
    const retries = Number(p.MaximumRetryAttempts);
    if (!(retries >= 0 && retries <= 10_000))
      find('msk-consumer', 'retries are not bounded (MaximumRetryAttempts)', id);
    const destination = (
      p.DestinationConfig as { OnFailure?: { Destination?: unknown } } | undefined
    )?.OnFailure?.Destination;
    if (!destination) find('msk-consumer', 'no on-failure destination', id);
    const fnId = getAtt(p.FunctionName);
    const statements = statementsOf(template, fnId ? roleOfFunction(template, fnId) : undefined);
    const granted = new Set(
      statements.flatMap(actionsOf).filter((a) => a.startsWith('kafka-cluster:')),
    );
    const missing = CONSUMER_ACTIONS.filter((a) => !granted.has(a));
    if (missing.length > 0) find('msk-consumer', `its role lacks ${missing.join(', ')}`, fnId);
    const extra = [...granted].filter((a) => !CONSUMER_ACTIONS.includes(a));
    if (extra.length > 0)
      find('msk-consumer', `its role has ${extra.join(', ')}, which a consumer does not use`, fnId);
  }
}

function checkTables(template: Template, options: CheckOptions, find: Find) {
  if (options.protectData === false) return;
  for (const id of PROTECTED_TABLES) {
    const table = template.Resources[id];
    if (!table) continue;
    if (table.DeletionPolicy !== 'Retain' || table.UpdateReplacePolicy !== 'Retain')
      find(
        'data',
        'no DeletionPolicy/UpdateReplacePolicy Retain: a stack removal or replacement deletes it',
        id,
      );
    if (table.Properties.DeletionProtectionEnabled !== true)
      find('data', 'no deletion protection', id);
    const pitr = table.Properties.PointInTimeRecoverySpecification as
      | { PointInTimeRecoveryEnabled?: boolean }
      | undefined;
    if (pitr?.PointInTimeRecoveryEnabled !== true) find('data', 'no point-in-time recovery', id);
  }
}

function checkAlarms(template: Template, options: CheckOptions, find: Find) {
  const resources = template.Resources;
  const alarms = ofType(template, 'AWS::CloudWatch::Alarm');
  const topicId = ofType(template, 'AWS::SNS::Topic')[0]?.[0];
  if (!topicId) return find('alarms', 'no alarm topic');
  if (
    !Object.values(template.Outputs ?? {}).some(
      (o) => JSON.stringify(o.Value) === JSON.stringify({ Ref: topicId }),
    )
  )
    find('alarms', 'the alarm topic is not an output', topicId);
  const subscribed = ofType(template, 'AWS::SNS::Subscription').some(
    ([, s]) =>
      JSON.stringify(s.Properties.TopicArn) === JSON.stringify({ Ref: topicId }) && !s.Condition,
  );
  if (options.production && !subscribed && !options.externallySubscribed)
    find('alarms', 'a production stage whose alarm topic has no subscription', topicId);
  const text = (a: Resource) => JSON.stringify(a.Properties);
  for (const [id, a] of alarms) {
    if (JSON.stringify(a.Properties.AlarmActions) !== JSON.stringify([{ Ref: topicId }]))
      find('alarms', 'does not notify the alarm topic', id);
  }
  const has = (predicate: (a: Resource) => boolean) => alarms.some(([, a]) => predicate(a));
  const onMetric = (namespace: string, metric: string, dimension: unknown) => (a: Resource) =>
    a.Properties.Namespace === namespace &&
    a.Properties.MetricName === metric &&
    JSON.stringify(a.Properties.Dimensions).includes(JSON.stringify(dimension));
  const functionName = (id: string) => {
    const name = resources[id]?.Properties.FunctionName;
    return [{ Ref: id }, name];
  };
  for (const [id] of ofType(template, 'AWS::Lambda::Function')) {
    for (const metric of ['Errors', 'Throttles']) {
      const covered = functionName(id).some((value) => has(onMetric('AWS/Lambda', metric, value)));
      if (!covered) find('alarms', `no ${metric} alarm`, id);
    }
  }
  if (resources.HttpApi) {
    for (const metric of ['5xx', 'Latency'])
      if (!has(onMetric('AWS/ApiGateway', metric, { Ref: 'HttpApi' })))
        find('alarms', `no API ${metric} alarm`, 'HttpApi');
  }
  for (const [id] of ofType(template, 'AWS::StepFunctions::StateMachine')) {
    for (const metric of ['ExecutionsFailed', 'ExecutionsTimedOut'])
      if (!has(onMetric('AWS/States', metric, { Ref: id })))
        find('alarms', `no ${metric} alarm`, id);
  }
  for (const [id] of ofType(template, 'AWS::DynamoDB::Table')) {
    if (
      !has(
        (a) => text(a).includes('ThrottleEvents') && text(a).includes(JSON.stringify({ Ref: id })),
      )
    )
      find('alarms', 'no throttling alarm', id);
  }
  if (resources.CanaryLambdaFunction) {
    for (const metric of ['CanaryAvailability', 'CanaryReadBackMs'])
      if (!has((a) => text(a).includes(`(${metric})`)))
        find('alarms', `no ${metric} alarm`, 'CanaryLambdaFunction');
  }
  const dashboard = JSON.stringify(resources.Dashboard?.Properties.DashboardBody ?? '');
  for (const [id, a] of alarms) {
    if (!dashboard.includes(`:alarm:${String(a.Properties.AlarmName)}\\"`))
      find('dashboard', 'not shown on the dashboard', id);
  }
}

function checkGrants(template: Template, options: CheckOptions, find: Find) {
  const resources = template.Resources;
  for (const [id] of ofType(template, 'AWS::IAM::Role')) {
    const others = JSON.stringify({ ...resources, [id]: undefined, Outputs: template.Outputs });
    if (!others.includes(`"${id}"`)) find('grants', 'a role nothing uses', id);
  }
  const functions = ofType(template, 'AWS::Lambda::Function');
  const roles = functions.map(([id]) => roleOfFunction(template, id));
  if (new Set(roles).size !== roles.length) find('grants', 'functions share a role');
  for (const [id, fn] of functions) {
    const roleId = roleOfFunction(template, id);
    const role = roleId ? resources[roleId] : undefined;
    const statements = statementsOf(template, roleId);
    for (const s of statements) {
      if (actionsOf(s).some((a) => a === '*' || a.endsWith(':*')))
        find('grants', `a wildcard action ${actionsOf(s).join(' ')}`, roleId);
    }
    const scramRead = statements.some((s) =>
      /secret:AmazonMSK_|parameter\/kafka-tally\//.test(JSON.stringify(s.Resource ?? '')),
    );
    if (scramRead && (!options.scram || NO_KAFKA.includes(id)))
      find(
        'grants',
        'reads SCRAM credentials it does not use (KAFKA_AUTH is not scram, or it reaches no broker)',
        roleId,
      );
    if (
      NO_KAFKA.includes(id) &&
      statements.some((s) => actionsOf(s).some((a) => a.startsWith('kafka-cluster:')))
    )
      find('grants', 'kafka-cluster grants on a function that talks to no broker', roleId);
    const inVpc =
      ((fn.Properties.VpcConfig as { SubnetIds?: unknown[] } | undefined)?.SubnetIds ?? []).length >
      0;
    const vpcPolicy = JSON.stringify(role?.Properties.ManagedPolicyArns ?? []).includes(
      'AWSLambdaVPCAccessExecutionRole',
    );
    if (vpcPolicy && !inVpc)
      find('grants', 'the VPC access policy on a function outside any VPC', roleId);
  }
  for (const [id, connection] of ofType(template, 'AWS::Events::Connection')) {
    const text = JSON.stringify(connection.Properties.AuthParameters ?? {});
    const values = [...text.matchAll(/"(ApiKeyValue|Password|ClientSecret)":"([^"]*)"/g)];
    for (const [, field, value] of values)
      if (!String(value).startsWith('{{resolve:secretsmanager:'))
        find('secrets', `${field} is a literal in the template`, id);
  }
  for (const [id, policy] of ofType(template, 'AWS::SNS::TopicPolicy')) {
    const statements = ((policy.Properties.PolicyDocument as { Statement: Statement[] })
      .Statement ?? []) as Array<Statement & { Principal?: { Service?: unknown } }>;
    for (const s of statements) {
      if (!s.Principal?.Service) continue;
      const condition = JSON.stringify(s.Condition ?? {});
      if (!/aws:Source(Account|Arn)/.test(condition))
        find('grants', 'a service may publish on behalf of any account (no aws:SourceAccount)', id);
    }
  }
}
