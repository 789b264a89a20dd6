import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

// infra/serverless/deploy-config.cjs: what packaging a stage refuses (issue 29, docs/deploy.md).
const require = createRequire(import.meta.url);
const { readSettings } = require('../../../../infra/serverless/deploy-config.cjs') as {
  readSettings: (
    env: Record<string, string>,
    stage: string,
    region: string,
  ) => {
    apiAuth: string;
    problems: string[];
    warnings: string[];
    protectData: boolean;
    downstreamClusterArn: string;
    limits: Record<string, number>;
  };
};

const CLUSTER =
  'arn:aws:kafka:eu-west-1:123456789012:cluster/prod/0f1e2d3c-aaaa-bbbb-cccc-1234567890ab-2';
const READY = { MSK_CLUSTER_ARN: CLUSTER, TALLY_NOTIFY_EMAIL: 'oncall@example.com' };
const named = (problems: string[]) => problems.map((p) => p.split(':')[0]);

describe('the deployment configuration a stage is packaged with', () => {
  it('checks nothing on stage local (npm start)', () => {
    expect(readSettings({}, 'local', 'eu-west-1').problems).toEqual([]);
  });

  it('names every variable a production stage still needs, all at once', () => {
    expect(named(readSettings({}, 'prod', 'eu-west-1').problems)).toEqual([
      'MSK_CLUSTER_ARN or KAFKA_BROKERS',
      'TALLY_NOTIFY_EMAIL',
    ]);
    expect(readSettings(READY, 'prod', 'eu-west-1').problems).toEqual([]);
  });

  it('warns, without refusing, on a non-production stage no one is notified of', () => {
    const settings = readSettings({ MSK_CLUSTER_ARN: CLUSTER }, 'dev', 'eu-west-1');
    expect(settings.problems).toEqual([]);
    expect(settings.warnings.join()).toContain('TALLY_NOTIFY_EMAIL');
    expect(
      readSettings(
        { MSK_CLUSTER_ARN: CLUSTER, TALLY_NOTIFY_SUBSCRIBED: 'true' },
        'prod',
        'eu-west-1',
      ).problems,
    ).toEqual([]);
  });

  it('authorizes with IAM by default; JWT needs a real issuer and an audience', () => {
    expect(readSettings(READY, 'prod', 'eu-west-1').apiAuth).toBe('iam');
    const jwt = readSettings({ ...READY, TALLY_API_AUTH: 'jwt' }, 'prod', 'eu-west-1');
    expect(named(jwt.problems)).toEqual(['TALLY_JWT_ISSUER', 'TALLY_JWT_AUDIENCE']);
    const placeholder = readSettings(
      {
        ...READY,
        TALLY_JWT_ISSUER: 'https://auth.example.invalid/',
        TALLY_JWT_AUDIENCE: 'kafka-tally',
      },
      'prod',
      'eu-west-1',
    );
    expect(placeholder.apiAuth).toBe('jwt');
    expect(named(placeholder.problems)).toEqual(['TALLY_JWT_ISSUER']);
    expect(
      named(readSettings({ ...READY, TALLY_API_AUTH: 'none' }, 'prod', 'eu-west-1').problems),
    ).toEqual(['TALLY_API_AUTH']);
  });

  it('refuses both Kafka settings, placeholders, a literal webhook key and a cluster of another region', () => {
    const problems = (env: Record<string, string>) =>
      named(readSettings({ ...READY, ...env }, 'prod', 'eu-west-1').problems);
    expect(problems({ KAFKA_BROKERS: 'b-1:9098' })).toEqual(['MSK_CLUSTER_ARN and KAFKA_BROKERS']);
    expect(
      problems({
        MSK_CLUSTER_ARN:
          'arn:aws:kafka:eu-west-1:123456789012:cluster/example/11111111-2222-3333-4444-555555555555-1',
      }),
    ).toEqual(['MSK_CLUSTER_ARN']);
    expect(problems({ TALLY_NOTIFY_WEBHOOK_URL: 'https://hooks.example.com/x' })).toEqual([
      'TALLY_NOTIFY_WEBHOOK_SECRET_ID',
    ]);
    expect(problems({ TALLY_NOTIFY_WEBHOOK_API_KEY: 'literal' })).toEqual([
      'TALLY_NOTIFY_WEBHOOK_API_KEY',
    ]);
    expect(
      problems({ DOWNSTREAM_MSK_CLUSTER_ARN: CLUSTER.replace('eu-west-1', 'us-east-1') }),
    ).toEqual(['DOWNSTREAM_MSK_CLUSTER_ARN']);
    expect(problems({ TALLY_PUBLISH_RATE_LIMIT: '-3', TALLY_PROTECT_DATA: 'maybe' })).toEqual([
      'TALLY_PUBLISH_RATE_LIMIT',
      'TALLY_PROTECT_DATA',
    ]);
  });

  it('lets a throwaway stage give up table protection, and sizes the edge from its settings', () => {
    const settings = readSettings(
      { ...READY, TALLY_PROTECT_DATA: 'false', TALLY_PUBLISH_RATE_LIMIT: '400' },
      'pr-12',
      'eu-west-1',
    );
    expect(settings.protectData).toBe(false);
    expect(settings.limits.publish).toBe(400);
  });
});

describe('the schema registry a stage is packaged with', () => {
  it('refuses an unknown TALLY_SCHEMA_REGISTRY, and Glue beside a Confluent URL', () => {
    const problems = (env: Record<string, string>) =>
      named(readSettings({ ...READY, ...env }, 'prod', 'eu-west-1').problems);
    expect(problems({ TALLY_SCHEMA_REGISTRY: 'glue' })).toEqual([]);
    expect(problems({ TALLY_SCHEMA_REGISTRY: 'karapace' })).toEqual(['TALLY_SCHEMA_REGISTRY']);
    expect(
      problems({
        TALLY_SCHEMA_REGISTRY: 'glue',
        TALLY_SCHEMA_REGISTRY_URL: 'https://registry.example/apis/ccompat/v7',
      }),
    ).toEqual(['TALLY_SCHEMA_REGISTRY_URL']);
    expect(problems({ TALLY_SCHEMA_REGISTRY: 'glue', TALLY_GLUE_AUTO_REGISTER: 'yes' })).toEqual([
      'TALLY_GLUE_AUTO_REGISTER',
    ]);
  });
});
