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

// AWS Glue Schema Registry (TALLY_SCHEMA_REGISTRY=glue): reading the registry's schemas (by
// definition, by version number) on TALLY_GLUE_REGISTRY_NAME's registry and its schemas, a
// version by its UUID (GetSchemaVersion by SchemaVersionId names no schema: AWS's own example
// grants it on *), and registering (CreateSchema, RegisterSchemaVersion) only with
// TALLY_GLUE_AUTO_REGISTER=true. A grant not needed names a registry that cannot exist.
const GLUE_UNCONFIGURED = 'tally-glue-unconfigured';
const glueSelected = () => (process.env.TALLY_SCHEMA_REGISTRY || '').trim() === 'glue';
const glueAutoRegister = () => (process.env.TALLY_GLUE_AUTO_REGISTER || '').trim() === 'true';

function glueRegistryResources(granted) {
  const name = granted
    ? (process.env.TALLY_GLUE_REGISTRY_NAME || '').trim() || 'default-registry'
    : GLUE_UNCONFIGURED;
  if (!/^[a-zA-Z0-9\-_$#.]{1,255}$/.test(name)) {
    throw new Error(`TALLY_GLUE_REGISTRY_NAME: "${name}" is not a Glue registry name`);
  }
  const arn = (path) => ({
    'Fn::Sub': `arn:\${AWS::Partition}:glue:\${AWS::Region}:\${AWS::AccountId}:${path}`,
  });
  return [arn(`registry/${name}`), arn(`schema/${name}/*`)];
}

module.exports = {
  secretRead: () => ({
    Effect: 'Allow',
    Action: ['secretsmanager:GetSecretValue'],
    Resource: [secretResource()],
  }),
  glueRead: () => ({
    Effect: 'Allow',
    Action: ['glue:GetSchemaByDefinition', 'glue:GetSchemaVersion'],
    Resource: glueRegistryResources(glueSelected()),
  }),
  glueReadById: () => ({
    Effect: 'Allow',
    Action: ['glue:GetSchemaVersion'],
    Resource: glueSelected() ? ['*'] : glueRegistryResources(false),
  }),
  glueRegister: () => ({
    Effect: 'Allow',
    Action: ['glue:CreateSchema', 'glue:RegisterSchemaVersion'],
    Resource: glueRegistryResources(glueSelected() && glueAutoRegister()),
  }),
};
