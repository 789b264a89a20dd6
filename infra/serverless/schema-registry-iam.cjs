// The schema registry's credentials: the produce functions (the v3 routes, which serialize with
// schemas) may read the one Secrets Manager secret TALLY_SCHEMA_REGISTRY_SECRET_ID names, and
// nothing else. Without it, a secret named `unconfigured` that cannot exist: the statement is in
// the template either way and grants nothing until the secret is given (as msk-iam.cjs does).
'use strict';

const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/;

function secretResource() {
  const id = (process.env.TALLY_SCHEMA_REGISTRY_SECRET_ID || '').trim();
  // A full ARN is the secret itself; a name gets Secrets Manager's 6-character suffix.
  if (SECRET_ARN.test(id)) return id;
  const name = id === '' ? 'tally-schema-registry-unconfigured' : id;
  if (!/^[\w/+=.@-]+$/.test(name)) {
    throw new Error(`TALLY_SCHEMA_REGISTRY_SECRET_ID: "${id}" is not a secret name or ARN`);
  }
  return {
    'Fn::Sub': `arn:\${AWS::Partition}:secretsmanager:\${AWS::Region}:\${AWS::AccountId}:secret:${name}-??????`,
  };
}

module.exports = {
  secretRead: () => ({
    Effect: 'Allow',
    Action: ['secretsmanager:GetSecretValue'],
    Resource: [secretResource()],
  }),
};
