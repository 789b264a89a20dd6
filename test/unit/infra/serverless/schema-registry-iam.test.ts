import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';

// infra/serverless/schema-registry-iam.cjs: the produce functions' AWS Glue grants, read from the
// environment at packaging time (serverless.yml's publishSchemas). AWS's serializer policy
// (Glue developer guide, "IAM examples for serializers"): GetSchemaByDefinition on the registry
// and its schemas; CreateSchema / RegisterSchemaVersion only for producers that register.
const require = createRequire(import.meta.url);
const path = '../../../../infra/serverless/schema-registry-iam.cjs';
type Statement = { Action: string[]; Resource: Array<string | { 'Fn::Sub': string }> };
const iam = () => {
  delete require.cache[require.resolve(path)];
  return require(path) as Record<'glueRead' | 'glueReadById' | 'glueRegister', () => Statement>;
};
const NAMES = ['TALLY_SCHEMA_REGISTRY', 'TALLY_GLUE_REGISTRY_NAME', 'TALLY_GLUE_AUTO_REGISTER'];
const resources = (s: Statement) =>
  s.Resource.map((r) => (typeof r === 'string' ? r : r['Fn::Sub'].replace(/^.*:\d*:?/, '')));
const withEnv = (env: Record<string, string>) => {
  for (const name of NAMES) delete process.env[name];
  Object.assign(process.env, env);
};
afterEach(() => withEnv({}));

describe('Glue grants of the produce functions', () => {
  it('grants nothing without Glue selected: every statement names a registry that cannot exist', () => {
    withEnv({});
    const m = iam();
    for (const s of [m.glueRead(), m.glueReadById(), m.glueRegister()]) {
      expect(
        resources(s).every((r) => r.includes('tally-glue-unconfigured')),
        JSON.stringify(s),
      ).toBe(true);
    }
  });

  it('with Glue: reads on the registry and its schemas, versions by id on *, registers nothing by default', () => {
    withEnv({ TALLY_SCHEMA_REGISTRY: 'glue', TALLY_GLUE_REGISTRY_NAME: 'orders' });
    const m = iam();
    expect(m.glueRead().Action).toEqual(['glue:GetSchemaByDefinition', 'glue:GetSchemaVersion']);
    expect(resources(m.glueRead())).toEqual(['registry/orders', 'schema/orders/*']);
    expect(m.glueReadById()).toMatchObject({ Action: ['glue:GetSchemaVersion'], Resource: ['*'] });
    expect(resources(m.glueRegister())).toEqual([
      'registry/tally-glue-unconfigured',
      'schema/tally-glue-unconfigured/*',
    ]);
  });

  it('with TALLY_GLUE_AUTO_REGISTER=true: CreateSchema and RegisterSchemaVersion on the registry', () => {
    withEnv({ TALLY_SCHEMA_REGISTRY: 'glue', TALLY_GLUE_AUTO_REGISTER: 'true' });
    const register = iam().glueRegister();
    expect(register.Action).toEqual(['glue:CreateSchema', 'glue:RegisterSchemaVersion']);
    expect(resources(register)).toEqual(['registry/default-registry', 'schema/default-registry/*']);
  });
});
