import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTableDefinitions } from '../../infra/local/table-definitions.js';
import { readZip } from '../helpers/zip.js';

const run = promisify(execFile);

/** The environment of a machine with no AWS credentials and no network to AWS. */
function offlineEnv(home: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^AWS_(ACCESS|SECRET|SESSION|PROFILE)/.test(name),
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
  };
}

interface Template {
  Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
}

describe('serverless package (offline, no AWS credentials)', () => {
  const work = mkdtempSync(join(tmpdir(), 'tally-sls-'));
  const artifacts = join(work, 'package');
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
      { env: offlineEnv(work), timeout: 110_000, maxBuffer: 16 * 1024 * 1024 },
    );
    template = JSON.parse(
      readFileSync(join(artifacts, 'cloudformation-template-update-stack.json'), 'utf8'),
    );
  }, 120_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('declares the publish functions on nodejs22.x behind their routes', () => {
    const routes = {
      Clusters: ['GET /v3/clusters', 'GET /v3/clusters/{cluster_id}'],
      Produce: ['POST /v3/clusters/{cluster_id}/topics/{topic_name}/records'],
      ProduceBatch: ['POST /v3/clusters/{cluster_id}/topics/{topic_name}/records:batch'],
      ProduceV2: ['POST /topics/{topic_name}'],
      Lookup: ['GET /v3/clusters/{cluster_id}/records/lookup'],
      ReconcileNow: ['POST /v3/clusters/{cluster_id}/reconcile'],
      Restore: ['POST /v3/clusters/{cluster_id}/consumer-groups/{group_id}/restore'],
      ConsumerGroup: ['GET /v3/clusters/{cluster_id}/consumer-groups/{group_id}'],
      Receipts: ['POST /v3/clusters/{cluster_id}/receipts'],
      AuditNow: ['POST /v3/clusters/{cluster_id}/audits'],
      AuditRead: ['GET /v3/clusters/{cluster_id}/audits/{audit_id}'],
      Burrow: [
        'GET /v3/kafka/{cluster}/consumer/{group}/status',
        'GET /v3/kafka/{cluster}/consumer/{group}/lag',
      ],
    };
    const routeKeys = Object.values(template.Resources)
      .filter((resource) => resource.Type === 'AWS::ApiGatewayV2::Route')
      .map((resource) => resource.Properties.RouteKey);
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

  it('grants DynamoDB actions on its own tables only, never "*"', () => {
    const role = template.Resources.IamRoleLambdaExecution?.Properties as {
      Policies: Array<{
        PolicyDocument: { Statement: Array<{ Action: string[]; Resource: unknown }> };
      }>;
    };
    const statements = role.Policies.flatMap((policy) => policy.PolicyDocument.Statement);
    const dynamodb = statements.filter((s) => s.Action.some((a) => a.startsWith('dynamodb:')));
    expect(dynamodb.length).toBeGreaterThan(0);
    for (const statement of dynamodb) {
      expect(statement.Action).not.toContain('dynamodb:*');
      expect(JSON.stringify(statement.Resource)).not.toContain('"*"');
    }
  });

  it('runs reconcile on an EventBridge schedule, every minute by default', () => {
    const rules = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Events::Rule');
    expect(rules.map((r) => r.Properties.ScheduleExpression)).toContain('rate(1 minute)');
    const targets = JSON.stringify(rules.map((r) => r.Properties.Targets));
    expect(targets).toContain('ReconcileLambdaFunction');
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
    mkdirSync(join('node_modules', '.cache'), { recursive: true });
    const dir = mkdtempSync(join('node_modules', '.cache', 'tally-bundle-'));
    const file = resolve(dir, 'handler.mjs');
    writeFileSync(file, bundle as Buffer);
    const started = run(
      process.execPath,
      ['--input-type=module', '-e', `await import(${JSON.stringify(pathToFileURL(file).href)});`],
      { env: { PATH: process.env.PATH } },
    );
    await expect(started).rejects.toMatchObject({
      stderr: expect.stringContaining('KAFKA_BROKERS'),
    });
  });
});
