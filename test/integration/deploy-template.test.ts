import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONSUMER_ACTIONS,
  checkTemplate,
  ofType,
  PROTECTED_TABLES,
  roleOfFunction,
  statementsOf,
  type Template,
} from '../../infra/deploy/template-checks.js';

// Issue 29: what `serverless deploy --stage prod` would create, packaged offline and checked.
// docs/deploy.md's own commands are run here, in its order, with its configuration (its
// `export` lines): its default deploy is the template asserted as "default"; a second package
// has every feature on.

const run = promisify(execFile);
type Json = Record<string, unknown>;
const MSK = 'arn:aws:kafka:eu-west-1:123456789012';
const CLUSTER = `${MSK}:cluster/prod/0f1e2d3c-aaaa-bbbb-cccc-1234567890ab-2`;
const PATH = 'prod/0f1e2d3c-aaaa-bbbb-cccc-1234567890ab-2';

/** Every feature on: MSK IAM, VPC, schema registry, tracing, notifications, webhook, consumer, JWT. */
const FULL = {
  MSK_CLUSTER_ARN: CLUSTER,
  TALLY_TOPIC_ALLOW_LIST: 'orders*,payments',
  TALLY_VPC_SUBNET_IDS: 'subnet-0a1b2c3d4e5f60718,subnet-0a1b2c3d4e5f60719',
  TALLY_VPC_SECURITY_GROUP_IDS: 'sg-0a1b2c3d4e5f60718',
  TALLY_SCHEMA_REGISTRY_URL: 'https://registry.example/apis/ccompat/v7',
  TALLY_SCHEMA_REGISTRY_SECRET_ID: 'kafka-tally/schema-registry',
  TALLY_TRACING: 'true',
  TALLY_NOTIFY_EMAIL: 'oncall@example.com',
  TALLY_NOTIFY_WEBHOOK_URL: 'https://hooks.example.com/tally',
  TALLY_NOTIFY_WEBHOOK_SECRET_ID: 'kafka-tally/webhook-key',
  DOWNSTREAM_MSK_CLUSTER_ARN: CLUSTER,
  TALLY_API_AUTH: 'jwt',
  TALLY_JWT_ISSUER: 'https://auth.example.com/',
  TALLY_JWT_AUDIENCE: 'kafka-tally',
};

/** A machine with no AWS credentials, and none of the developer's Tally settings. */
function offlineEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) =>
        !/^AWS_(ACCESS|SECRET|SESSION|PROFILE|REGION)/.test(name) &&
        !/^(TALLY_|MSK_|KAFKA_|DOWNSTREAM_)/.test(name),
    ),
  );
  return {
    ...env,
    HOME: home,
    AWS_SHARED_CREDENTIALS_FILE: join(home, 'no-credentials'),
    AWS_CONFIG_FILE: join(home, 'no-config'),
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
    CI: 'true',
    ...extra,
  };
}

/** The lines of docs/deploy.md's ```sh blocks, in order (comments kept, after a `#`). */
function documentedCommands(): Array<{ command: string; comment: string }> {
  const doc = readFileSync('docs/deploy.md', 'utf8');
  const blocks = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  return blocks
    .flatMap((block) => block.split('\n'))
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const at = line.indexOf(' #');
      return at < 0
        ? { command: line, comment: '' }
        : { command: line.slice(0, at).trim(), comment: line.slice(at + 2).trim() };
    });
}

/** Commands that need an AWS account (or npm's registry): everything else in the doc is run. */
const NEEDS_AWS = [/^npx serverless (deploy|remove|info)\b/, /^aws /, /^awscurl /, /^npm ci$/];

type Outcome = { code: number; stdout: string; stderr: string };
async function shell(command: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  const [program, ...args] = command.split(/\s+/);
  // A packaging bundles the AWS SDK into every function (issue 32): ~50 s idle, minutes loaded.
  return run(program as string, args, { env, timeout: 560_000, maxBuffer: 16 * 1024 * 1024 })
    .then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }))
    .catch((error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: typeof error.code === 'number' ? error.code : 1,
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }));
}

describe('docs/deploy.md, run offline, and the templates of a prod deploy', () => {
  const work = mkdtempSync(join(tmpdir(), 'tally-deploy-'));
  const home = join(work, 'home');
  const outcomes: Array<{ command: string; comment: string; outcome: Outcome }> = [];
  let documented: NodeJS.ProcessEnv = {};
  let defaults: Template;
  let full: Template;
  let fullCheck: Outcome;

  beforeAll(async () => {
    // The doc's commands in its order; its exports configure the ones after them.
    const exports: Record<string, string> = {};
    const ran = new Map<string, Outcome>();
    const fullRun = shell(
      'npm run deploy:check -- --stage prod',
      offlineEnv(home, { ...FULL, TALLY_DEPLOY_CHECK_OUT: join(work, 'full') }),
    );
    for (const { command, comment } of documentedCommands()) {
      const exported = /^export ([A-Z_]+)=(\S+)$/.exec(command);
      if (exported) {
        exports[exported[1] as string] = exported[2] as string;
        continue;
      }
      if (NEEDS_AWS.some((pattern) => pattern.test(command))) continue;
      const env = offlineEnv(home, { ...exports, TALLY_DEPLOY_CHECK_OUT: join(work, 'doc') });
      // The same command with the same configuration (upgrading's check) has one outcome.
      const key = JSON.stringify([command, exports]);
      const outcome = ran.get(key) ?? (await shell(command, env));
      ran.set(key, outcome);
      outcomes.push({ command, comment, outcome });
    }
    documented = exports;
    fullCheck = await fullRun;
    const template = (dir: string) =>
      JSON.parse(
        readFileSync(join(work, dir, 'cloudformation-template-update-stack.json'), 'utf8'),
      );
    defaults = template('doc');
    full = template('full');
  }, 800_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('runs every offline command of docs/deploy.md with the outcome the doc gives', () => {
    const commands = outcomes.map((o) => o.command);
    expect(commands).toContain('npx serverless package --stage prod');
    expect(commands).toContain('npm run deploy:check -- --stage prod');
    for (const { command, comment, outcome } of outcomes) {
      const output = `${outcome.stdout}${outcome.stderr}`;
      if (/refused/.test(comment)) expect(outcome.code, `${command}\n${output}`).not.toBe(0);
      else expect(outcome.code, `${command}\n${output}`).toBe(0);
    }
  });

  it('refuses to package prod with nothing configured, naming each variable to set', () => {
    const refused = outcomes.find((o) => /refused/.test(o.comment));
    const output = `${refused?.outcome.stdout}${refused?.outcome.stderr}`;
    expect(refused?.outcome.code).not.toBe(0);
    for (const variable of ['MSK_CLUSTER_ARN', 'KAFKA_BROKERS', 'TALLY_NOTIFY_EMAIL']) {
      expect(output).toContain(variable);
    }
    // The auth mode it would deploy with, and how to choose the other; JWT's own settings are
    // named when it is chosen without them (test/unit/infra/serverless/deploy-config.test.ts).
    expect(output).toMatch(
      /AWS_IAM.*TALLY_API_AUTH=jwt with TALLY_JWT_ISSUER and TALLY_JWT_AUDIENCE/,
    );
    expect(output).toContain('docs/deploy.md');
  });

  it('passes cfn-lint and every Tally check, default and with every feature on', () => {
    const documentedRun = outcomes.find((o) => o.command.startsWith('npm run deploy:check'));
    for (const outcome of [documentedRun?.outcome, fullCheck]) {
      const output = `${outcome?.stdout}${outcome?.stderr}`;
      expect(outcome?.code, output).toBe(0);
      expect(output).toContain('tally checks: 0 findings');
      expect(output).toMatch(/cfn-lint: (0 errors|not installed)/);
      expect(output).toMatch(/would create \(stage prod, eu-west-1\): \d+ resources/);
      expect(output).toContain('AWS::Lambda::Function');
    }
    expect(documented.MSK_CLUSTER_ARN).toBeDefined();
    expect(checkTemplate(defaults, { production: true })).toEqual([]);
    expect(checkTemplate(full, { production: true })).toEqual([]);
  });

  it('authorizes the API with IAM by default, with JWT (issuer and audience) when asked', () => {
    for (const [, route] of ofType(defaults, 'AWS::ApiGatewayV2::Route')) {
      expect(route.Properties.AuthorizationType).toBe('AWS_IAM');
      expect(route.Properties.AuthorizerId).toBeUndefined();
    }
    expect(ofType(defaults, 'AWS::ApiGatewayV2::Authorizer')).toEqual([]);
    const [[, authorizer] = []] = ofType(full, 'AWS::ApiGatewayV2::Authorizer');
    expect(authorizer?.Properties.JwtConfiguration).toEqual({
      Audience: ['kafka-tally'],
      Issuer: 'https://auth.example.com/',
    });
    for (const [, route] of ofType(full, 'AWS::ApiGatewayV2::Route'))
      expect(route.Properties.AuthorizationType).toBe('JWT');
  });

  it('grants AWS Glue Schema Registry actions to the produce functions only, and nothing without TALLY_SCHEMA_REGISTRY=glue', () => {
    for (const template of [defaults, full]) {
      for (const [id] of ofType(template, 'AWS::Lambda::Function')) {
        const glue = statementsOf(template, roleOfFunction(template, id)).filter((s) =>
          [s.Action].flat().some((a) => String(a).startsWith('glue:')),
        );
        if (!['ProduceLambdaFunction', 'ProduceBatchLambdaFunction'].includes(id)) {
          expect(glue, id).toEqual([]);
          continue;
        }
        expect(glue.flatMap((s) => [s.Action].flat()).sort(), id).toEqual([
          'glue:CreateSchema',
          'glue:GetSchemaByDefinition',
          'glue:GetSchemaVersion',
          'glue:GetSchemaVersion',
          'glue:RegisterSchemaVersion',
        ]);
        // Neither package selects Glue: every grant names a registry that cannot exist.
        for (const s of glue)
          expect(JSON.stringify(s.Resource), id).toMatch(/tally-glue-unconfigured/);
      }
    }
  });

  it('creates the MSK event source only with a cluster, reporting batch failures, bounded, with a failures queue', () => {
    expect(ofType(defaults, 'AWS::Lambda::EventSourceMapping')).toEqual([]);
    expect(ofType(defaults, 'AWS::SQS::Queue')).toEqual([]);
    // Without its event source the example has none of the polling's grants.
    const idle = statementsOf(
      defaults,
      roleOfFunction(defaults, 'DownstreamExampleLambdaFunction'),
    );
    expect(idle.flatMap((s) => [s.Action].flat()).filter((a) => /^(kafka|ec2)/.test(a))).toEqual(
      [],
    );

    const [[, mapping] = []] = ofType(full, 'AWS::Lambda::EventSourceMapping');
    expect(mapping?.Properties).toMatchObject({
      EventSourceArn: CLUSTER,
      Topics: ['orders'],
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ProvisionedPollerConfig: { MinimumPollers: 1, MaximumPollers: 2 },
      MaximumRetryAttempts: 5,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': ['DownstreamExampleFailuresQueue', 'Arn'] } },
      },
      Enabled: true,
    });
    const statements = statementsOf(full, roleOfFunction(full, 'DownstreamExampleLambdaFunction'));
    const kafka: Record<string, string[]> = {};
    for (const s of statements) {
      for (const action of [s.Action].flat().filter((a) => a.startsWith('kafka-cluster:'))) {
        for (const resource of [s.Resource].flat() as string[])
          kafka[resource] = [...(kafka[resource] ?? []), action].sort();
      }
    }
    expect(kafka).toEqual({
      [CLUSTER]: ['kafka-cluster:Connect', 'kafka-cluster:DescribeClusterDynamicConfiguration'],
      [`${MSK}:topic/${PATH}/orders`]: ['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData'],
      [`${MSK}:group/${PATH}/tally-downstream-example`]: [
        'kafka-cluster:AlterGroup',
        'kafka-cluster:DescribeGroup',
      ],
    });
    expect(Object.values(kafka).flat().sort()).toEqual(CONSUMER_ACTIONS);
    expect(statements.some((s) => [s.Action].flat().includes('sqs:SendMessage'))).toBe(true);
  });

  it('retains, protects and backs up the tables that cannot be rebuilt', () => {
    for (const template of [defaults, full]) {
      for (const id of PROTECTED_TABLES) {
        const table = template.Resources[id];
        expect(table, id).toMatchObject({
          DeletionPolicy: 'Retain',
          UpdateReplacePolicy: 'Retain',
        });
        expect(table?.Properties, id).toMatchObject({
          DeletionProtectionEnabled: true,
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        });
      }
    }
  });

  it('alarms on every function, the API, the state machines, the canary and the tables, to a subscribed topic', () => {
    const alarms = ofType(defaults, 'AWS::CloudWatch::Alarm');
    const functions = ofType(defaults, 'AWS::Lambda::Function');
    // Errors and throttles per function (reconcile's and audit's errors alarms are serverless.yml's).
    expect(alarms.filter(([, a]) => a.Properties.Namespace === 'AWS/Lambda').length).toBe(
      functions.length * 2,
    );
    const names = alarms.map(([, a]) => String(a.Properties.AlarmName));
    for (const name of [
      'api-5xx',
      'api-latency',
      'canary-availability',
      'canary-lag',
      'offset-repair-failed',
      'offset-repair-timedout',
      'table-ledger-throttles',
      'produce-errors',
      'produce-throttles',
    ])
      expect(names).toContain(`kafka-tally-prod-${name}`);
    expect(defaults.Outputs?.AlarmTopicArn?.Value).toEqual({ Ref: 'NotificationsTopic' });
    const [[, subscription] = []] = ofType(defaults, 'AWS::SNS::Subscription');
    expect(subscription?.Properties).toMatchObject({
      Protocol: 'email',
      Endpoint: documented.TALLY_NOTIFY_EMAIL,
    });
    expect(subscription?.Condition).toBeUndefined();
  });

  it('throttles at the gateway before the functions run out of their reserved concurrency', () => {
    const [[, stage] = []] = ofType(defaults, 'AWS::ApiGatewayV2::Stage');
    const settings = stage?.Properties.RouteSettings as Record<
      string,
      { ThrottlingRateLimit: number }
    >;
    expect(settings['POST /v3/clusters/{cluster_id}/topics/{topic_name}/records']).toEqual({
      ThrottlingRateLimit: 100,
      ThrottlingBurstLimit: 200,
    });
    expect(defaults.Resources.ProduceLambdaFunction?.Properties.ReservedConcurrentExecutions).toBe(
      50,
    );
    for (const [id, fn] of ofType(defaults, 'AWS::Lambda::Function'))
      expect(fn.Properties.ReservedConcurrentExecutions, id).toBeGreaterThan(0);
    // One transactional id per container that may publish at once (issue 33): the pool is the
    // publishing functions' reserved concurrency added up and a quarter more (containers retired
    // with a lease unexpired), on every function that leases from it.
    const reservedOf = (id: string) =>
      Number(defaults.Resources[id]?.Properties.ReservedConcurrentExecutions);
    const publishers = [
      'ProduceLambdaFunction',
      'ProduceBatchLambdaFunction',
      'ProduceV2LambdaFunction',
      'PublishRecordLambdaFunction',
      'CanaryLambdaFunction',
    ];
    const pool = publishers.reduce((sum, id) => sum + reservedOf(id), 0);
    expect(pool).toBeGreaterThan(64);
    for (const id of publishers) {
      const environment = defaults.Resources[id]?.Properties.Environment as
        | { Variables: Record<string, string> }
        | undefined;
      expect(environment?.Variables.TALLY_TXN_POOL_SIZE, id).toBe(String(Math.ceil(pool * 1.25)));
    }
  });

  it('keeps the webhook key out of the template and the topic to this account; no idle role or policy', () => {
    const [[, connection] = []] = ofType(full, 'AWS::Events::Connection');
    expect(JSON.stringify(connection?.Properties)).toContain(
      '{{resolve:secretsmanager:kafka-tally/webhook-key}}',
    );
    expect(ofType(defaults, 'AWS::Events::Connection')).toEqual([]);
    expect(defaults.Conditions).toBeUndefined();
    for (const template of [defaults, full]) {
      expect(template.Resources.IamRoleLambdaExecution).toBeUndefined();
      const [[, policy] = []] = ofType(template, 'AWS::SNS::TopicPolicy');
      expect(JSON.stringify(policy?.Properties)).toContain(
        '"Condition":{"StringEquals":{"aws:SourceAccount":{"Ref":"AWS::AccountId"}}}',
      );
    }
    // No VPC by default: no function has the VPC policy; in a VPC, exactly those in it.
    expect(JSON.stringify(defaults.Resources)).not.toContain('AWSLambdaVPCAccessExecutionRole');
    for (const [id, fn] of ofType(full, 'AWS::Lambda::Function')) {
      const role = full.Resources[roleOfFunction(full, id) as string];
      expect(
        JSON.stringify(role?.Properties.ManagedPolicyArns ?? []).includes('VPCAccess'),
        id,
      ).toBe(fn.Properties.VpcConfig !== undefined);
    }
  });

  it("finds each of issue 29's findings when it is undone on the template", () => {
    const undo = (edit: (t: Template) => void): string[] => {
      const copy = JSON.parse(JSON.stringify(full)) as Template;
      edit(copy);
      return [...new Set(checkTemplate(copy, { production: true }).map((f) => f.check))];
    };
    const mappingOf = (t: Template) =>
      ofType(t, 'AWS::Lambda::EventSourceMapping')[0]?.[1].Properties as Record<string, unknown>;
    expect(undo((t) => delete mappingOf(t).FunctionResponseTypes)).toEqual(['msk-consumer']);
    expect(undo((t) => delete mappingOf(t).ProvisionedPollerConfig)).toEqual(['msk-consumer']);
    expect(undo((t) => delete mappingOf(t).DestinationConfig)).toEqual(['msk-consumer']);
    expect(undo((t) => (mappingOf(t).MaximumRetryAttempts = -1))).toEqual(['msk-consumer']);
    expect(
      undo((t) => {
        mappingOf(t).EventSourceArn =
          'arn:aws:kafka:eu-west-1:123456789012:cluster/example/11111111-2222-3333-4444-555555555555-1';
      }),
    ).toEqual(['msk-consumer']);
    expect(
      undo((t) => {
        const role = roleOfFunction(t, 'DownstreamExampleLambdaFunction');
        for (const s of statementsOf(t, role))
          s.Action = [s.Action].flat().filter((a) => a !== 'kafka-cluster:ReadData');
      }),
    ).toEqual(['msk-consumer']);
    expect(undo((t) => delete t.Resources.LedgerTable?.DeletionPolicy)).toEqual(['data']);
    expect(
      undo((t) => delete t.Resources.ReceiptsTable?.Properties.PointInTimeRecoverySpecification),
    ).toEqual(['data']);
    expect(undo((t) => delete t.Outputs?.AlarmTopicArn)).toEqual(['alarms']);
    expect(
      undo((t) => {
        for (const [id] of ofType(t, 'AWS::SNS::Subscription')) delete t.Resources[id];
      }),
    ).toEqual(['alarms']);
    expect(undo((t) => delete t.Resources.AuditNowErrorsAlarm)).toEqual(['alarms']);
    expect(undo((t) => delete t.Resources.Api5xxAlarm)).toEqual(['alarms']);
    expect(undo((t) => delete t.Resources.CanaryAvailabilityAlarm)).toEqual(['alarms']);
    expect(undo((t) => delete t.Resources.LedgerTableThrottlesAlarm)).toEqual(['alarms']);
    expect(undo((t) => delete t.Resources.AuditFanOutExecutionsFailedAlarm)).toEqual(['alarms']);
    expect(
      undo((t) => {
        const [[, stage] = []] = ofType(t, 'AWS::ApiGatewayV2::Stage');
        delete stage?.Properties.RouteSettings;
      }),
    ).toEqual(['throttling']);
    expect(
      undo(
        (t) => delete t.Resources.ProduceLambdaFunction?.Properties.ReservedConcurrentExecutions,
      ),
    ).toEqual(['concurrency']);
    expect(
      undo((t) => {
        const [[, c] = []] = ofType(t, 'AWS::Events::Connection');
        const auth = c?.Properties.AuthParameters as { ApiKeyAuthParameters: Json };
        auth.ApiKeyAuthParameters.ApiKeyValue = 's3cret';
      }),
    ).toEqual(['secrets']);
    expect(
      undo((t) => {
        const [[, p] = []] = ofType(t, 'AWS::SNS::TopicPolicy');
        const document = p?.Properties.PolicyDocument as { Statement: Json[] };
        for (const statement of document.Statement) delete statement.Condition;
      }),
    ).toEqual(['grants']);
    expect(
      undo((t) => {
        t.Resources.IamRoleLambdaExecution = JSON.parse(
          JSON.stringify(t.Resources[roleOfFunction(t, 'OpenapiLambdaFunction') as string]),
        );
      }),
    ).toEqual(['grants']);
    expect(
      undo((t) => {
        delete t.Resources.OpenapiLambdaFunction?.Properties.VpcConfig;
        const role = t.Resources[roleOfFunction(t, 'OpenapiLambdaFunction') as string];
        if (role)
          role.Properties.ManagedPolicyArns = [
            'arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole',
          ];
      }),
    ).toEqual(['grants']);
    expect(
      undo((t) => {
        for (const s of statementsOf(t, roleOfFunction(t, 'ClustersLambdaFunction')))
          if ([s.Action].flat().includes('kafka-cluster:Connect'))
            s.Resource = [
              ...[s.Resource].flat(),
              'arn:aws:secretsmanager:eu-west-1:1:secret:AmazonMSK_kafka-tally-x',
            ];
      }),
    ).toEqual(['grants']);
    const jwt = ofType(full, 'AWS::ApiGatewayV2::Authorizer')[0]?.[0] as string;
    expect(
      undo((t) => {
        (t.Resources[jwt]?.Properties.JwtConfiguration as { Issuer: string }).Issuer =
          'https://auth.example.invalid/';
      }),
    ).toEqual(['api-auth']);
  });
});
