import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

// infra/serverless/deploy.cjs: the SCRAM credentials' grants every role inherits from
// provider.iam.role.statements stay only where they are used (issue 29: no unused grants).
const require = createRequire(import.meta.url);
const { dropUnusedScramGrants } = require('../../../../infra/serverless/deploy.cjs') as {
  dropUnusedScramGrants: (
    template: Template,
    functions: Record<string, { vpc?: unknown }>,
    scram: boolean,
  ) => void;
};
type Statement = { Effect: string; Action: string[]; Resource: unknown };
type Template = {
  Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
};

const SCRAM_SECRET: Statement = {
  Effect: 'Allow',
  Action: ['secretsmanager:GetSecretValue'],
  Resource: [
    {
      'Fn::Sub': 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:AmazonMSK_kafka-tally*',
    },
  ],
};
const SCRAM_PARAMETER: Statement = {
  Effect: 'Allow',
  Action: ['ssm:GetParameter'],
  Resource: [
    {
      'Fn::Sub': 'arn:aws:ssm:eu-west-1:123456789012:parameter/kafka-tally/*',
    },
  ],
};
const DECRYPT: Statement = { Effect: 'Allow', Action: ['kms:Decrypt'], Resource: ['key'] };
const REGISTRY: Statement = {
  Effect: 'Allow',
  Action: ['secretsmanager:GetSecretValue'],
  Resource: ['arn:registry'],
};
const LOGS: Statement = { Effect: 'Allow', Action: ['logs:PutLogEvents'], Resource: ['arn:logs'] };

function template(): Template {
  const fn = (name: string, extra: Statement[]) => ({
    [`${name}LambdaFunction`]: {
      Type: 'AWS::Lambda::Function',
      Properties: { Role: { 'Fn::GetAtt': [`${name}Role`, 'Arn'] } },
    },
    [`${name}Role`]: {
      Type: 'AWS::IAM::Role',
      Properties: {
        Policies: [
          {
            PolicyDocument: { Statement: [LOGS, SCRAM_SECRET, SCRAM_PARAMETER, DECRYPT, ...extra] },
          },
        ],
      },
    },
  });
  return {
    Resources: { ...fn('Clusters', []), ...fn('Produce', [REGISTRY]), ...fn('Openapi', []) },
  };
}
const FUNCTIONS = { clusters: { vpc: {} }, produce: { vpc: {} }, openapi: {} };
function statements(t: Template, role: string): Statement[] | undefined {
  const policies = t.Resources[role]?.Properties.Policies as
    | Array<{ PolicyDocument: { Statement: Statement[] } }>
    | undefined;
  return policies?.[0]?.PolicyDocument.Statement;
}

describe('the SCRAM credentials grants', () => {
  it('are kept with KAFKA_AUTH=scram on the functions that reach a broker, and only there', () => {
    const t = template();
    dropUnusedScramGrants(t, FUNCTIONS, true);
    expect(statements(t, 'ClustersRole')).toEqual([LOGS, SCRAM_SECRET, SCRAM_PARAMETER, DECRYPT]);
    expect(statements(t, 'OpenapiRole')).toEqual([LOGS]);
  });

  it('go with any other Kafka auth, KMS staying only where a secret is still read', () => {
    const t = template();
    dropUnusedScramGrants(t, FUNCTIONS, false);
    expect(statements(t, 'ClustersRole')).toEqual([LOGS]);
    expect(statements(t, 'ProduceRole')).toEqual([LOGS, DECRYPT, REGISTRY]);
  });
});
