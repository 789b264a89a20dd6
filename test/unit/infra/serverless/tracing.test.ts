import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';

// infra/serverless/tracing.cjs, the packaging plugin behind TALLY_TRACING, on a template of one
// function and one state machine (test/integration/serverless-package.test.ts packages the
// whole service both ways).

interface Plugin {
  hooks: Record<string, () => void>;
}
const require = createRequire(import.meta.url);
const Tracing = require('../../../../infra/serverless/tracing.cjs') as {
  new (serverless: unknown): Plugin;
  enabled(): boolean;
};

function service() {
  const resources: Record<string, { Type: string; Properties: Record<string, unknown> }> = {
    ProduceLambdaFunction: {
      Type: 'AWS::Lambda::Function',
      Properties: { Role: { 'Fn::GetAtt': ['ProduceIamRoleLambdaExecution', 'Arn'] } },
    },
    ProduceIamRoleLambdaExecution: {
      Type: 'AWS::IAM::Role',
      Properties: { Policies: [{ PolicyDocument: { Statement: [] as unknown[] } }] },
    },
  };
  const machine: Record<string, unknown> = { definition: {} };
  const serverless = {
    service: {
      stepFunctions: { stateMachines: { offsetRepair: machine } },
      provider: { compiledCloudFormationTemplate: { Resources: resources } },
    },
  };
  const plugin = new Tracing(serverless);
  const packageIt = () => {
    plugin.hooks['before:package:compileFunctions']?.();
    plugin.hooks['before:package:finalize']?.();
  };
  return { resources, machine, packageIt };
}

describe('the packaging plugin of TALLY_TRACING', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('changes nothing by default', () => {
    vi.stubEnv('TALLY_TRACING', '');
    const { resources, machine, packageIt } = service();
    const before = JSON.stringify({ resources, machine });
    packageIt();
    expect(JSON.stringify({ resources, machine })).toBe(before);
    expect(Tracing.enabled()).toBe(false);
  });

  it('on: the release layer, one X-Ray grant per role (packaging twice adds none) and traced state machines', () => {
    vi.stubEnv('TALLY_TRACING', 'true');
    const { resources, machine, packageIt } = service();
    packageIt();
    expect(Tracing.enabled()).toBe(true);
    expect(resources.ProduceLambdaFunction?.Properties.Layers).toEqual([
      '{{resolve:ssm:/aws/service/powertools/typescript/generic/all/2.35.0}}',
    ]);
    const role = resources.ProduceIamRoleLambdaExecution?.Properties as {
      Policies: Array<{ PolicyDocument: { Statement: unknown[] } }>;
    };
    const statements = () => role.Policies[0]?.PolicyDocument.Statement;
    const grant = {
      Effect: 'Allow',
      Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'],
      Resource: ['*'],
    };
    expect(statements()).toEqual([grant]);
    finalizeAgain(resources);
    expect(statements()).toEqual([grant]);
    expect(resources.ProduceLambdaFunction?.Properties.Layers).toHaveLength(1);
    expect(machine.tracingConfig).toEqual({ enabled: true });
  });

  it('takes a layer version ARN from TALLY_POWERTOOLS_LAYER_ARN, and names it when it is not one', () => {
    vi.stubEnv('TALLY_TRACING', 'true');
    const arn = 'arn:aws:lambda:eu-west-1:094274105915:layer:AWSLambdaPowertoolsTypeScriptV2:48';
    vi.stubEnv('TALLY_POWERTOOLS_LAYER_ARN', arn);
    const { resources, packageIt } = service();
    packageIt();
    expect(resources.ProduceLambdaFunction?.Properties.Layers).toEqual([arn]);
    vi.stubEnv('TALLY_POWERTOOLS_LAYER_ARN', 'AWSLambdaPowertoolsTypeScriptV2');
    expect(() => service().packageIt()).toThrow(/^TALLY_POWERTOOLS_LAYER_ARN: /);
  });

  it('refuses a TALLY_TRACING that is neither true nor false, naming it', () => {
    vi.stubEnv('TALLY_TRACING', 'yes');
    expect(() => Tracing.enabled()).toThrow(/^TALLY_TRACING must be true or false, got "yes"$/);
    expect(() => service().packageIt()).toThrow(/^TALLY_TRACING/);
  });
});

/** The finalize hook run again on the same template, as a second plugin pass would. */
function finalizeAgain(resources: Record<string, unknown>) {
  const serverless = {
    service: { provider: { compiledCloudFormationTemplate: { Resources: resources } } },
  };
  new Tracing(serverless).hooks['before:package:finalize']?.();
}
