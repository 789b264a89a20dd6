import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceCopy } from '../../infra/deploy/service-copy.js';
import { loadTableDefinitions } from '../../infra/local/table-definitions.js';
import { readZip } from '../helpers/zip.js';

const run = promisify(execFile);

const MSK_CLUSTER =
  'arn:aws:kafka:eu-west-1:123456789012:cluster/prod/0f1e2d3c-aaaa-bbbb-cccc-1234567890ab-2';
const MSK = 'arn:aws:kafka:eu-west-1:123456789012';
const MSK_PATH = 'prod/0f1e2d3c-aaaa-bbbb-cccc-1234567890ab-2';
/** The functions that serialize keys and values with schemas (the v3 produce routes). */
const SCHEMA_FUNCTIONS = ['ProduceLambdaFunction', 'ProduceBatchLambdaFunction'];

/** The environment of a machine with no AWS credentials and no network to AWS. */
function offlineEnv(home: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      // Tracing is asserted off by default: a developer's TALLY_TRACING must not leak in.
      ([name]) =>
        !/^AWS_(ACCESS|SECRET|SESSION|PROFILE)/.test(name) &&
        !/^TALLY_(TRACING|POWERTOOLS_LAYER_ARN)$/.test(name),
    ),
  );
  return {
    ...env,
    HOME: home,
    AWS_SHARED_CREDENTIALS_FILE: join(home, 'no-credentials'),
    AWS_CONFIG_FILE: join(home, 'no-config'),
    // A deployment to an MSK cluster with IAM auth, in a VPC (issue 17): the grants and the
    // network settings below are asserted for this configuration.
    MSK_CLUSTER_ARN: MSK_CLUSTER,
    TALLY_TOPIC_ALLOW_LIST: 'orders*,payments',
    TALLY_VPC_SUBNET_IDS: 'subnet-0a1b2c3d4e5f60718,subnet-0a1b2c3d4e5f60719',
    TALLY_VPC_SECURITY_GROUP_IDS: 'sg-0a1b2c3d4e5f60718',
    // A schema registry whose basic auth is a Secrets Manager secret (issue 20).
    TALLY_SCHEMA_REGISTRY_URL: 'https://registry.example/apis/ccompat/v7',
    TALLY_SCHEMA_REGISTRY_SECRET_ID: 'kafka-tally/schema-registry',
    // JWT authorization of the API (issue 29: IAM is the default; the routes' scopes are
    // asserted for JWT here), and the downstream example's event source on the same cluster.
    TALLY_JWT_ISSUER: 'https://auth.example.com/',
    TALLY_JWT_AUDIENCE: 'kafka-tally',
    DOWNSTREAM_MSK_CLUSTER_ARN: MSK_CLUSTER,
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
    CI: 'true',
  };
}

/** Writes a zip's entries under `dir`, as Lambda unzips a function's package. */
function unzipInto(dir: string, entries: Map<string, Buffer>): void {
  for (const [name, bytes] of entries) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), bytes);
  }
}

interface Template {
  Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
}

const ofType = (template: Template, type: string) =>
  Object.entries(template.Resources).filter(([, r]) => r.Type === type);

describe('serverless package (offline, no AWS credentials)', () => {
  const work = mkdtempSync(join(tmpdir(), 'tally-sls-'));
  const artifacts = join(work, 'package');
  const service = serviceCopy();
  let template: Template;

  beforeAll(async () => {
    await run(
      process.execPath,
      [
        'node_modules/serverless/bin/serverless.js',
        'package',
        '--stage',
        'test',
        '--package',
        artifacts,
      ],
      // A copy of the service: packaging the checkout would remove the .esbuild/ a running
      // stack serves its handlers from (infra/deploy/service-copy.ts).
      // ~50 s on 2 idle cores since every function bundles the AWS SDK (issue 32); minutes when
      // the machine is loaded.
      { cwd: service, env: offlineEnv(work), timeout: 560_000, maxBuffer: 16 * 1024 * 1024 },
    );
    template = JSON.parse(
      readFileSync(join(artifacts, 'cloudformation-template-update-stack.json'), 'utf8'),
    );
  });

  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
    rmSync(service, { recursive: true, force: true });
  });

  it('declares the HTTP functions on nodejs22.x behind their routes', () => {
    const routes = {
      Clusters: ['GET /v3/clusters', 'GET /v3/clusters/{cluster_id}'],
      Produce: ['POST /v3/clusters/{cluster_id}/topics/{topic_name}/records'],
      ProduceBatch: ['POST /v3/clusters/{cluster_id}/topics/{topic_name}/records:batch'],
      ProduceV2: ['POST /topics/{topic_name}'],
      Lookup: ['GET /v3/clusters/{cluster_id}/records/lookup'],
      ReconcileNow: ['POST /v3/clusters/{cluster_id}/reconcile'],
      Restore: ['POST /v3/clusters/{cluster_id}/consumer-groups/{group_id}/restore'],
      Acknowledge: ['POST /v3/clusters/{cluster_id}/consumer-groups/{group_id}/acknowledge'],
      ConsumerGroup: ['GET /v3/clusters/{cluster_id}/consumer-groups/{group_id}'],
      Receipts: ['POST /v3/clusters/{cluster_id}/receipts'],
      AuditNow: ['POST /v3/clusters/{cluster_id}/audits'],
      AuditRead: ['GET /v3/clusters/{cluster_id}/audits/{audit_id}'],
      Approvals: ['GET /v3/clusters/{cluster_id}/approvals'],
      Approve: ['POST /v3/clusters/{cluster_id}/approvals/{token}'],
      Openapi: ['GET /openapi.json'],
      Burrow: [
        'GET /burrow/admin',
        'GET /v3/kafka',
        'GET /v3/kafka/{cluster}',
        'GET /v3/kafka/{cluster}/consumer',
        'GET /v3/kafka/{cluster}/consumer/{group}',
        'GET /v3/kafka/{cluster}/consumer/{group}/status',
        'GET /v3/kafka/{cluster}/consumer/{group}/lag',
        'GET /v3/kafka/{cluster}/topic',
        'GET /v3/kafka/{cluster}/topic/{topic}',
        'GET /v3/kafka/{cluster}/topic/{topic}/consumers',
        'GET /v3/config',
        'GET /v3/config/storage',
        'GET /v3/config/storage/{name}',
        'GET /v3/config/evaluator',
        'GET /v3/config/evaluator/{name}',
        'GET /v3/config/cluster',
        'GET /v3/config/cluster/{cluster}',
        'GET /v3/config/consumer',
        'GET /v3/config/consumer/{name}',
        'GET /v3/config/notifier',
        'GET /v3/config/notifier/{name}',
        'GET /v3/admin/loglevel',
      ],
    };
    const routeKeys = Object.values(template.Resources)
      .filter((resource) => resource.Type === 'AWS::ApiGatewayV2::Route')
      .map((resource) => resource.Properties.RouteKey);
    // Every route is behind the JWT authorizer, with the route's scope (or admin).
    const routeResources = Object.values(template.Resources).filter(
      (resource) => resource.Type === 'AWS::ApiGatewayV2::Route',
    );
    expect(routeResources.length).toBe(38);
    for (const route of routeResources) {
      expect(route.Properties, String(route.Properties.RouteKey)).toMatchObject({
        AuthorizationType: 'JWT',
        AuthorizationScopes: expect.arrayContaining(['tally/admin']),
      });
    }
    for (const [name, keys] of Object.entries(routes)) {
      const fn = template.Resources[`${name}LambdaFunction`];
      expect(fn?.Type, name).toBe('AWS::Lambda::Function');
      expect(fn?.Properties.Runtime).toBe('nodejs22.x');
      const environment = fn?.Properties.Environment as { Variables: Record<string, unknown> };
      const variables = environment.Variables;
      expect(variables.TALLY_LEDGER_TABLE).toBe('kafka-tally-test-ledger');
      for (const key of keys) expect(routeKeys).toContain(key);
    }
  });

  type Statement = { Effect: string; Action: string[]; Resource: unknown };
  const statementsOf = (roleId: string): Statement[] => {
    const role = template.Resources[roleId]?.Properties as {
      Policies: Array<{ PolicyDocument: { Statement: Statement[] } }>;
    };
    return role.Policies.flatMap((policy) => policy.PolicyDocument.Statement);
  };
  const roleOf = (functionId: string) => getAttOf(template.Resources[functionId]?.Properties.Role);
  /** The logical id of `{"Fn::GetAtt": [id, ...]}`. */
  function getAttOf(value: unknown): string {
    const id = (value as { 'Fn::GetAtt'?: string[] } | undefined)?.['Fn::GetAtt']?.[0];
    expect(id).toBeTypeOf('string');
    return id as string;
  }
  /** `Table` for the table's ARN, `Table/index/name` for one of its indexes. */
  function tableOf(resource: Record<string, unknown>): string | undefined {
    const getAtt = resource['Fn::GetAtt'] as string[] | undefined;
    if (getAtt) return getAtt[0];
    const join = resource['Fn::Join'] as [string, unknown[]] | undefined;
    if (!join) return resource.Ref as string | undefined;
    const [separator, parts] = join;
    return parts
      .map((part) => (typeof part === 'string' ? part : tableOf(part as Record<string, unknown>)))
      .join(separator);
  }
  const functions = () =>
    Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');

  it('gives every function a role of its own, never "*" in an action or on a table', () => {
    const roles = functions().map(([id]) => roleOf(id));
    expect(new Set(roles).size).toBe(roles.length);
    for (const role of roles) {
      for (const statement of statementsOf(role)) {
        expect(
          statement.Action.some((a) => a.includes('*')),
          role,
        ).toBe(false);
        if (statement.Action.some((a) => a.startsWith('dynamodb:'))) {
          const resources = statement.Resource as Array<Record<string, unknown>>;
          expect(resources.length, role).toBeGreaterThan(0);
          for (const resource of resources) expect(tableOf(resource), role).toMatch(/Table(\/|$)/);
        }
      }
    }
  });

  it('grants each function only the actions it sends, on only its tables', () => {
    const grants = (functionId: string) =>
      statementsOf(roleOf(functionId))
        .filter((s) => s.Action.some((a) => /^(dynamodb|states):/.test(a)))
        .flatMap((s) =>
          (s.Resource as Array<Record<string, unknown>>).map(
            (r) => `${tableOf(r)}: ${[...s.Action].sort().join(' ')}`,
          ),
        )
        .sort();
    expect(grants('ProduceLambdaFunction')).toEqual([
      'LedgerTable: dynamodb:DeleteItem dynamodb:GetItem dynamodb:PutItem dynamodb:Query dynamodb:UpdateItem',
      'ReservationsTable: dynamodb:GetItem dynamodb:PutItem dynamodb:UpdateItem',
      'StreamsTable: dynamodb:GetItem dynamodb:UpdateItem',
      // The transactional id pool (docs/transactions.md): leases read and conditionally taken.
      'TxnIdsTable: dynamodb:Query dynamodb:UpdateItem',
    ]);
    expect(grants('AuditReadLambdaFunction')).toEqual(['AuditsTable: dynamodb:GetItem']);
    // Stored state is pruned by the runs themselves (no TTL): they may delete what they prune.
    expect(grants('AuditLambdaFunction')).toEqual([
      'AuditsTable: dynamodb:DeleteItem dynamodb:GetItem dynamodb:PutItem',
      'LedgerTable/index/byWriteTime: dynamodb:Query',
      'LedgerTable: dynamodb:BatchGetItem dynamodb:DeleteItem dynamodb:GetItem dynamodb:PutItem dynamodb:Query',
      'ReceiptsTable: dynamodb:Query',
      'ReconcileReportsTable: dynamodb:Query',
      'StreamsTable: dynamodb:GetItem',
    ]);
    // A reconcile fan-out child is a reconcile run over its shard: the same grants; its plan
    // lists groups and its merge adds summaries up, neither touching a table.
    for (const id of ['ReconcileLambdaFunction', 'ReconcileFanOutChildLambdaFunction']) {
      expect(grants(id), id).toEqual([
        'MappingsTable/index/byShard: dynamodb:Query',
        'MappingsTable: dynamodb:DeleteItem dynamodb:PutItem dynamodb:Scan',
        'OffsetHistoryTable/index/byShard: dynamodb:Query',
        'OffsetHistoryTable: dynamodb:DeleteItem dynamodb:PutItem dynamodb:Scan',
        'ReconcileReportsTable/index/byShard: dynamodb:Query',
        'ReconcileReportsTable: dynamodb:BatchWriteItem dynamodb:DeleteItem dynamodb:GetItem dynamodb:PutItem dynamodb:Query',
      ]);
    }
    // Restore, plan-repair and acknowledge read one group's history by its key: no Scan.
    expect(grants('RestoreLambdaFunction')).toEqual([
      'OffsetHistoryTable: dynamodb:Query',
      'ReconcileReportsTable: dynamodb:DeleteItem dynamodb:PutItem dynamodb:Query',
    ]);
    expect(grants('PlanRepairLambdaFunction')).toEqual([
      'OffsetHistoryTable: dynamodb:Query',
      'ReconcileReportsTable: dynamodb:DeleteItem dynamodb:PutItem dynamodb:Query',
    ]);
    expect(grants('AcknowledgeLambdaFunction')).toEqual([
      'OffsetHistoryTable: dynamodb:PutItem dynamodb:Query',
    ]);
    // The audit fan-out: the plan touches no table, a child only the audits table (checkpoint
    // and slices); the merge is an audit run.
    expect(grants('FanOutPlanLambdaFunction')).toEqual([]);
    expect(grants('FanOutChildLambdaFunction')).toEqual([
      'AuditsTable: dynamodb:GetItem dynamodb:PutItem',
    ]);
    expect(grants('FanOutMergeLambdaFunction')).toEqual(grants('AuditLambdaFunction'));
    expect(grants('ReconcileFanOutPlanLambdaFunction')).toEqual([]);
    expect(grants('ReconcileFanOutMergeLambdaFunction')).toEqual([]);
    expect(grants('ExecuteRepairLambdaFunction')).toEqual([
      'ReconcileReportsTable: dynamodb:DeleteItem dynamodb:PutItem dynamodb:Query',
    ]);
    expect(grants('ClustersLambdaFunction')).toEqual([]);
    // The MSK-triggered example: its receipts, and the once guard's claims and ranges.
    expect(grants('DownstreamExampleLambdaFunction')).toEqual([
      'OnceTable/index/byPruneAt: dynamodb:Query',
      'OnceTable: dynamodb:BatchWriteItem dynamodb:DeleteItem dynamodb:GetItem dynamodb:PutItem dynamodb:Query dynamodb:UpdateItem',
      'ReceiptsTable: dynamodb:BatchWriteItem dynamodb:PutItem',
    ]);
    expect(grants('ApproveLambdaFunction')).toEqual([
      'ApprovalsTable: dynamodb:GetItem dynamodb:UpdateItem',
      'OffsetRepairStateMachine: states:SendTaskFailure states:SendTaskSuccess',
    ]);
  });

  it('grants MSK IAM access per function: publish writes only to allowed topics, reads only where audited', () => {
    /** Resource → sorted kafka-cluster actions (and kafka:GetBootstrapBrokers), per function. */
    const kafka = (functionId: string) => {
      const grants: Record<string, string[]> = {};
      for (const statement of statementsOf(roleOf(functionId))) {
        const actions = statement.Action.filter((a) => /^kafka(-cluster)?:/.test(a));
        if (actions.length === 0) continue;
        // (The packaging writes a one-element list as the element.)
        const resources = [statement.Resource].flat() as string[];
        for (const resource of resources) {
          grants[resource] = [...new Set([...(grants[resource] ?? []), ...actions])].sort();
        }
      }
      return grants;
    };
    const cluster = `${MSK}:cluster/${MSK_PATH}`;
    const topic = (name: string) => `${MSK}:topic/${MSK_PATH}/${name}`;
    const group = (name: string) => `${MSK}:group/${MSK_PATH}/${name}`;
    const connect = [
      'kafka-cluster:Connect',
      'kafka-cluster:DescribeCluster',
      'kafka:GetBootstrapBrokers',
    ];
    const write = [
      'kafka-cluster:DescribeTopic',
      'kafka-cluster:DescribeTopicDynamicConfiguration',
      'kafka-cluster:WriteData',
    ];
    for (const id of [
      'ProduceLambdaFunction',
      'ProduceBatchLambdaFunction',
      'ProduceV2LambdaFunction',
      'PublishRecordLambdaFunction',
    ]) {
      expect(kafka(id), id).toEqual({
        [cluster]: [...connect, 'kafka-cluster:WriteDataIdempotently'].sort(),
        // A keyed retry settling a transaction reads its offsets (read_committed).
        [topic('orders*')]: [...write, 'kafka-cluster:ReadData'].sort(),
        [topic('payments')]: [...write, 'kafka-cluster:ReadData'].sort(),
        // Transactional publish: only the pool's ids (TALLY_TXN_ID_PREFIX), and its own groups.
        [`${MSK}:transactional-id/${MSK_PATH}/tally-publish*`]: [
          'kafka-cluster:AlterTransactionalId',
          'kafka-cluster:DescribeTransactionalId',
        ],
        [group('tally-settle-*')]: ['kafka-cluster:AlterGroup', 'kafka-cluster:DescribeGroup'],
      });
    }
    const readGroups = ['kafka-cluster:DescribeGroup', 'kafka-cluster:DescribeTopic'];
    for (const id of [
      'ReconcileLambdaFunction',
      'ReconcileFanOutPlanLambdaFunction',
      'ReconcileFanOutChildLambdaFunction',
    ]) {
      expect(kafka(id), id).toEqual({
        [cluster]: connect.sort(),
        [topic('*')]: readGroups,
        [group('*')]: readGroups,
      });
    }
    expect(kafka('ReconcileFanOutMergeLambdaFunction')).toEqual({});
    const alter = ['kafka-cluster:AlterGroup', ...readGroups].sort();
    for (const id of ['RestoreLambdaFunction', 'ExecuteRepairLambdaFunction']) {
      expect(kafka(id), id).toEqual({
        [cluster]: connect.sort(),
        [topic('*')]: alter,
        [group('*')]: alter,
      });
    }
    // The audit (and its fan-out's children and merge) reads every topic, through groups of its
    // own that it may delete; the fan-out's plan only counts a topic's partitions.
    for (const id of [
      'AuditLambdaFunction',
      'FanOutChildLambdaFunction',
      'FanOutMergeLambdaFunction',
    ]) {
      expect(kafka(id), id).toEqual({
        [cluster]: connect.sort(),
        [topic('*')]: ['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData'],
        [group('tally-audit-*')]: [
          'kafka-cluster:AlterGroup',
          'kafka-cluster:DeleteGroup',
          'kafka-cluster:DescribeGroup',
        ],
      });
    }
    expect(kafka('FanOutPlanLambdaFunction')).toEqual({
      [cluster]: connect.sort(),
      [topic('*')]: ['kafka-cluster:DescribeTopic'],
    });
    // The canary: its own topic only, created on first use, written and read back.
    expect(kafka('CanaryLambdaFunction')).toEqual({
      [cluster]: [...connect, 'kafka-cluster:WriteDataIdempotently'].sort(),
      [topic('tally-canary')]: [
        'kafka-cluster:CreateTopic',
        'kafka-cluster:DescribeTopic',
        'kafka-cluster:DescribeTopicDynamicConfiguration',
        'kafka-cluster:ReadData',
        'kafka-cluster:WriteData',
      ],
      [group('tally-audit-*')]: [
        'kafka-cluster:AlterGroup',
        'kafka-cluster:DeleteGroup',
        'kafka-cluster:DescribeGroup',
      ],
    });
    expect(kafka('ClustersLambdaFunction')).toEqual({ [cluster]: connect.sort() });
    // Nothing but publish, the workflow's publish task and the canary may write.
    for (const [id] of functions()) {
      const writes = Object.entries(kafka(id)).filter(([, actions]) =>
        actions.includes('kafka-cluster:WriteData'),
      );
      if (!/^(Produce|ProduceBatch|ProduceV2|PublishRecord|Canary)LambdaFunction$/.test(id))
        expect(writes, id).toEqual([]);
    }
  });

  it('runs every function that talks to Kafka in the configured VPC, and no other', () => {
    for (const [id, fn] of functions()) {
      const vpc = fn.Properties.VpcConfig as
        | { SubnetIds: string[]; SecurityGroupIds: string[] }
        | undefined;
      // The MSK-triggered example (its records come from the event source), the verify task,
      // the OpenAPI document and the reconcile fan-out's merge talk to no broker.
      if (
        [
          'DownstreamExampleLambdaFunction',
          'VerifyPublishedLambdaFunction',
          'OpenapiLambdaFunction',
          'ReconcileFanOutMergeLambdaFunction',
        ].includes(id)
      ) {
        expect(vpc, id).toBeUndefined();
        continue;
      }
      expect(vpc, id).toEqual({
        SubnetIds: ['subnet-0a1b2c3d4e5f60718', 'subnet-0a1b2c3d4e5f60719'],
        SecurityGroupIds: ['sg-0a1b2c3d4e5f60718'],
      });
    }
  });

  it('packages the canary on its schedule, its topic audited on another, and the dashboard', () => {
    expect(template.Resources.CanaryLambdaFunction?.Type).toBe('AWS::Lambda::Function');
    const rules = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Events::Rule');
    const targets = rules.flatMap(
      (r) => r.Properties.Targets as Array<{ Arn: unknown; Input?: string }>,
    );
    expect(targets.some((t) => JSON.stringify(t.Arn).includes('CanaryLambdaFunction'))).toBe(true);
    expect(
      targets.some((t) => t.Input !== undefined && JSON.parse(t.Input).topic === 'tally-canary'),
    ).toBe(true);
    const dashboard = template.Resources.Dashboard;
    expect(dashboard?.Type).toBe('AWS::CloudWatch::Dashboard');
    const sub = dashboard?.Properties.DashboardBody as { 'Fn::Sub': [string, unknown] } | undefined;
    const body = sub?.['Fn::Sub'][0] ?? '{}';
    const widgets = JSON.parse(body.replace(/\$\{[^}]+\}/g, 'x')).widgets as Array<{
      properties: { title: string };
    }>;
    const titles = widgets.map((w) => w.properties.title).join(' | ');
    for (const shown of [
      'Publish: records by outcome',
      'latency',
      'lag',
      'status',
      'duplicates by layer',
      'lost',
      'Canary',
      'errors',
      'duration',
    ]) {
      expect(titles).toContain(shown);
    }
  });

  // biome-ignore-start lint/suspicious/noTemplateCurlyInString: CloudFormation Fn::Sub strings
  it('grants no SCRAM secret with IAM auth; the schema registry secret only to the v3 produce routes, decrypted only through Secrets Manager', () => {
    for (const [id] of functions()) {
      const statements = statementsOf(roleOf(id));
      const reads = (action: string) =>
        statements
          .filter((s) => s.Action.includes(action))
          .flatMap((s) => (s.Resource as Array<{ 'Fn::Sub': string }>).map((r) => r['Fn::Sub']));
      // KAFKA_AUTH is iam (the default with MSK_CLUSTER_ARN): no function reads SCRAM
      // credentials (issue 29: no unused grants; with KAFKA_AUTH=scram, test/unit/infra/serverless/deploy-scram-grants).
      const registrySecret = SCHEMA_FUNCTIONS.includes(id)
        ? [
            'arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:kafka-tally/schema-registry-??????',
          ]
        : [];
      expect(reads('secretsmanager:GetSecretValue'), id).toEqual(registrySecret);
      expect(reads('ssm:GetParameter'), id).toEqual([]);
      const decrypt = statements.find((s) => s.Action.includes('kms:Decrypt')) as
        | (Statement & { Condition?: { StringEquals?: Record<string, unknown> } })
        | undefined;
      if (!SCHEMA_FUNCTIONS.includes(id)) {
        expect(decrypt, id).toBeUndefined();
        continue;
      }
      expect(decrypt?.Condition?.StringEquals?.['kms:ViaService'], id).toEqual([
        { 'Fn::Sub': 'secretsmanager.${AWS::Region}.amazonaws.com' },
        { 'Fn::Sub': 'ssm.${AWS::Region}.amazonaws.com' },
      ]);
    }
  });

  // biome-ignore-end lint/suspicious/noTemplateCurlyInString: CloudFormation Fn::Sub strings

  it('declares the state machines, allowed to invoke exactly the functions they call', () => {
    for (const [id, functionIds] of [
      [
        'OffsetRepairStateMachine',
        [
          'ReconcileLambdaFunction',
          'PlanRepairLambdaFunction',
          'RequestApprovalLambdaFunction',
          'CheckGroupEmptyLambdaFunction',
          'ExecuteRepairLambdaFunction',
          'AuditLambdaFunction',
        ],
      ],
      [
        'PublishAndVerifyStateMachine',
        ['PublishRecordLambdaFunction', 'AuditLambdaFunction', 'VerifyPublishedLambdaFunction'],
      ],
      [
        'AuditFanOutStateMachine',
        ['FanOutPlanLambdaFunction', 'FanOutChildLambdaFunction', 'FanOutMergeLambdaFunction'],
      ],
      [
        'ReconcileFanOutStateMachine',
        [
          'ReconcileFanOutPlanLambdaFunction',
          'ReconcileFanOutChildLambdaFunction',
          'ReconcileFanOutMergeLambdaFunction',
        ],
      ],
    ] as const) {
      const machine = template.Resources[id];
      expect(machine?.Type).toBe('AWS::StepFunctions::StateMachine');
      const definition = JSON.stringify(machine?.Properties.DefinitionString);
      for (const fn of functionIds) expect(definition).toContain(fn);
      const roleId = getAttOf(machine?.Properties.RoleArn);
      const invoked = statementsOf(roleId)
        .filter((s) => s.Action.includes('lambda:InvokeFunction'))
        .flatMap((s) => s.Resource as Array<Record<string, unknown>>)
        .map((r) => (r['Fn::GetAtt'] as string[] | undefined)?.[0])
        .filter((name) => name !== undefined);
      expect(new Set(invoked)).toEqual(new Set(functionIds));
    }
  });

  it('lets the fan-outs start their own child executions (Distributed Map)', () => {
    for (const id of ['AuditFanOutStateMachine', 'ReconcileFanOutStateMachine']) {
      const machine = template.Resources[id];
      const actions = statementsOf(getAttOf(machine?.Properties.RoleArn)).flatMap((s) => s.Action);
      expect(actions, id).toEqual(
        expect.arrayContaining(['states:StartExecution', 'states:DescribeExecution']),
      );
    }
  });

  it('connects the example downstream function to its MSK topic, with its own role', () => {
    const mapping = Object.values(template.Resources).find(
      (r) => r.Type === 'AWS::Lambda::EventSourceMapping',
    );
    expect(mapping?.Properties).toMatchObject({
      Topics: ['orders'],
      StartingPosition: 'TRIM_HORIZON',
      AmazonManagedKafkaEventSourceConfig: { ConsumerGroupId: 'tally-downstream-example' },
      FunctionName: { 'Fn::GetAtt': ['DownstreamExampleLambdaFunction', 'Arn'] },
    });
    const actions = statementsOf(roleOf('DownstreamExampleLambdaFunction')).flatMap(
      (s) => s.Action,
    );
    expect(actions).toEqual(
      expect.arrayContaining(['kafka:GetBootstrapBrokers', 'dynamodb:BatchWriteItem']),
    );
  });

  it('runs reconcile on an EventBridge schedule, every minute by default', () => {
    const rules = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Events::Rule');
    expect(rules.map((r) => r.Properties.ScheduleExpression)).toContain('rate(1 minute)');
    const targets = JSON.stringify(rules.map((r) => r.Properties.Targets));
    expect(targets).toContain('ReconcileLambdaFunction');
    expect(targets).toContain('AuditLambdaFunction');
    expect(rules.map((r) => r.Properties.ScheduleExpression)).toContain('rate(15 minutes)');
  });

  it('declares every table of infra/resources/tables.yml with its key schema', () => {
    for (const table of loadTableDefinitions()) {
      const resource = template.Resources[table.logicalId];
      expect(resource?.Type).toBe('AWS::DynamoDB::Table');
      expect(resource?.Properties.KeySchema).toEqual(table.keySchema);
      expect(resource?.Properties.BillingMode).toBe('PAY_PER_REQUEST');
    }
  });

  it('bundles each function with esbuild into a self-contained ES module that runs', async () => {
    const entries = readZip(readFileSync(join(artifacts, 'clusters.zip')));
    const bundle = entries.get('functions/publish/clusters-handler.mjs');
    expect(bundle).toBeDefined();
    expect([...entries.keys()].some((name) => name.includes('node_modules/'))).toBe(false);
    // Load it in a plain Node process with only the bundle and, as in Lambda's runtime, the AWS
    // SDK: without Kafka settings it must refuse to start, naming the variable (a loud cold start).
    // The zip is unzipped whole, as Lambda does: with splitting, a bundle imports its chunks.
    mkdirSync(join('node_modules', '.cache'), { recursive: true });
    const dir = mkdtempSync(join('node_modules', '.cache', 'tally-bundle-'));
    unzipInto(dir, entries);
    const file = resolve(dir, 'functions/publish/clusters-handler.mjs');
    const started = run(
      process.execPath,
      ['--input-type=module', '-e', `await import(${JSON.stringify(pathToFileURL(file).href)});`],
      { env: { PATH: process.env.PATH } },
    );
    await expect(started).rejects.toMatchObject({
      stderr: expect.stringContaining('KAFKA_BROKERS'),
    });
  });

  it('leaves tracing off by default: no tracing, no layer and no X-Ray grant anywhere', () => {
    for (const [id, fn] of ofType(template, 'AWS::Lambda::Function')) {
      expect(fn.Properties.TracingConfig, id).toBeUndefined();
      expect(fn.Properties.Layers, id).toBeUndefined();
      const { Variables } = fn.Properties.Environment as { Variables: Record<string, unknown> };
      expect(Variables.TALLY_TRACING, id).toBe('false');
    }
    for (const [id, machine] of ofType(template, 'AWS::StepFunctions::StateMachine')) {
      expect(machine.Properties.TracingConfiguration, id).toBeUndefined();
    }
    expect(JSON.stringify(template.Resources)).not.toContain('xray:');
  });

  it('configures the schema registry for the v3 produce routes only', () => {
    for (const [id, fn] of functions()) {
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> })
        .Variables;
      if (SCHEMA_FUNCTIONS.includes(id)) {
        expect(variables, id).toMatchObject({
          TALLY_SCHEMA_REGISTRY_URL: 'https://registry.example/apis/ccompat/v7',
          TALLY_SCHEMA_REGISTRY_SECRET_ID: 'kafka-tally/schema-registry',
        });
      } else {
        expect(variables.TALLY_SCHEMA_REGISTRY_URL, id).toBeUndefined();
      }
    }
  });

  it("ships the schema codecs' chunk in the produce zip, loaded only by the import that needs it", async () => {
    const entries = readZip(readFileSync(join(artifacts, 'produce.zip')));
    const handler = entries.get('functions/publish/produce-handler.mjs')?.toString('utf8') ?? '';
    const chunk = /import\("\.\/(produce-handler\.schema-[\w-]+\.mjs)"\)/.exec(handler)?.[1];
    expect(chunk, 'a dynamic import of the encoder chunk').toBeDefined();
    const chunkPath = `functions/publish/${chunk}`;
    expect(entries.has(chunkPath)).toBe(true);
    // The entry does not import avsc's code statically: its bytes are in the chunk (the entry is
    // 450 KB with the AWS SDK bundled, issue 32; with the codecs' ~410 KB it would pass 850 KB).
    expect(handler.length).toBeLessThan(680 * 1024);
    expect((entries.get(chunkPath) as Buffer).length).toBeGreaterThan(200 * 1024);
    // Named after its function, it is packed with no other (serverless-esbuild leaves another
    // entry's `<entry>.*` files out), and no function but the two v3 produce routes has one.
    for (const name of readdirSync(artifacts).filter((f) => f.endsWith('.zip'))) {
      const chunks = [...readZip(readFileSync(join(artifacts, name))).keys()].filter((entry) =>
        /\.schema-[\w-]+\.mjs$/.test(entry),
      );
      expect(chunks, name).toEqual(
        name === 'produce.zip'
          ? [chunkPath]
          : name === 'produceBatch.zip'
            ? [expect.stringMatching(/^functions\/publish\/batch-handler\.schema-/)]
            : [],
      );
    }

    // Unzipped as Lambda unzips it: the handler loads (configured, nothing to reach at init),
    // and the chunk beside it loads and serializes with an inline Avro schema; the registry it
    // would register it in does not answer, so the answer is the retriable 503 of the record.
    mkdirSync(join('node_modules', '.cache'), { recursive: true });
    const dir = mkdtempSync(join('node_modules', '.cache', 'tally-produce-'));
    unzipInto(dir, entries);
    const url = (name: string) => JSON.stringify(pathToFileURL(resolve(dir, name)).href);
    const script = `
      await import(${url('functions/publish/produce-handler.mjs')});
      const { createRegistryEncoder } = await import(${url(chunkPath)});
      const encoder = createRegistryEncoder({ url: 'http://127.0.0.1:9', timeoutMs: 500 });
      const part = { schema: { subject: { subject: 's' }, inline: { type: 'AVRO', text: '"string"' } },
        data: 'x', field: 'value', role: 'value' };
      const error = await encoder.encode(part, 'orders').catch((e) => e);
      console.log(JSON.stringify({ name: error.name, status: error.status, field: error.field }));
      process.exit(0);`;
    try {
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
        env: {
          PATH: process.env.PATH,
          KAFKA_BROKERS: '127.0.0.1:9',
          TALLY_STREAMS_TABLE: 's',
          TALLY_LEDGER_TABLE: 'l',
          TALLY_RESERVATIONS_TABLE: 'r',
          TALLY_AUTH: 'gateway',
          LOG_LEVEL: 'error',
        },
        timeout: 30_000,
      });
      expect(JSON.parse(stdout.trim().split('\n').pop() ?? '{}')).toEqual({
        name: 'SchemaRegistryUnavailableError',
        status: 503,
        field: 'value.schema',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Packaged once more, with TALLY_TRACING=true (a package takes a minute of CPU: the default's
// side is asserted on the template above, not packaged again).
describe('serverless package with TALLY_TRACING=true', () => {
  const work = mkdtempSync(join(tmpdir(), 'tally-sls-tracing-'));
  const service = serviceCopy();
  let traced: Template;
  const LAYER = '{{resolve:ssm:/aws/service/powertools/typescript/generic/all/2.35.0}}';
  const XRAY = ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'];

  beforeAll(async () => {
    const env = { ...offlineEnv(join(work, 'home')), TALLY_TRACING: 'true' };
    const cli = 'node_modules/serverless/bin/serverless.js';
    const artifacts = join(work, 'traced');
    await run(process.execPath, [cli, 'package', '--stage', 'test', '--package', artifacts], {
      cwd: service,
      env,
      timeout: 560_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    const file = join(artifacts, 'cloudformation-template-update-stack.json');
    traced = JSON.parse(readFileSync(file, 'utf8'));
  });
  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
    rmSync(service, { recursive: true, force: true });
  });

  /** The statements of a role that grant anything of X-Ray. */
  const xrayGrants = (template: Template, roleArn: unknown) => {
    const roleId = (roleArn as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0] as string;
    const role = template.Resources[roleId]?.Properties as {
      Policies: Array<{ PolicyDocument: { Statement: Array<{ Action: string[] | string }> } }>;
    };
    return role.Policies.flatMap((p) => p.PolicyDocument.Statement).filter((s) =>
      [s.Action].flat().some((action) => action.startsWith('xray:')),
    );
  };

  it('traces every function (Active), with the Powertools layer and X-Ray on its own role', () => {
    const functions = ofType(traced, 'AWS::Lambda::Function');
    for (const [id, fn] of functions) {
      expect(fn.Properties.TracingConfig, id).toEqual({ Mode: 'Active' });
      expect(fn.Properties.Layers, id).toEqual([LAYER]);
      const { Variables } = fn.Properties.Environment as { Variables: Record<string, unknown> };
      expect(Variables.TALLY_TRACING, id).toBe('true');
      expect(xrayGrants(traced, fn.Properties.Role), id).toEqual([
        { Effect: 'Allow', Action: XRAY, Resource: ['*'] },
      ]);
    }
  });

  it('traces every state machine, whose roles may then send to X-Ray', () => {
    const machines = ofType(traced, 'AWS::StepFunctions::StateMachine');
    expect(machines.length).toBe(4);
    for (const [id, machine] of machines) {
      expect(machine.Properties.TracingConfiguration, id).toEqual({ Enabled: true });
      const actions = xrayGrants(traced, machine.Properties.RoleArn).flatMap((s) => s.Action);
      expect(actions, id).toEqual(expect.arrayContaining(XRAY));
    }
  });

  it("attaches the layer of the Powertools release the code is built against (package.json's)", () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    // The Tracer the tests run (the devDependency) is the layer's, and the same release as the
    // bundled Logger and Metrics: one Powertools version in the function.
    const version = manifest.devDependencies['@aws-lambda-powertools/tracer'];
    expect(version).toBe(manifest.dependencies['@aws-lambda-powertools/logger']);
    expect(version).toBe(manifest.dependencies['@aws-lambda-powertools/metrics']);
    const [[, fn] = []] = ofType(traced, 'AWS::Lambda::Function');
    expect(fn?.Properties.Layers).toEqual([
      `{{resolve:ssm:/aws/service/powertools/typescript/generic/all/${version}}}`,
    ]);
  });
});
