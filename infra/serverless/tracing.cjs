'use strict';

// X-Ray tracing, on only with TALLY_TRACING=true at packaging (docs/operations.md "Tracing").
// serverless.yml turns on the functions' TracingConfig (provider.tracing.lambda, from `enabled`
// below) and passes TALLY_TRACING to them; this plugin adds what serverless.yml cannot say
// conditionally, and only when tracing is on:
// - the Powertools layer on every function: the Tracer is not bundled (custom.esbuild.exclude),
//   functions/platform/tracing.ts imports it from the layer at init;
// - the X-Ray grant on every function's role (serverless adds it only to its shared role, and
//   serverless-iam-roles-per-function gives each function a role of its own without it);
// - tracing on every state machine (serverless-step-functions then grants X-Ray to their roles).
// Off, the template holds none of them.

/** The Powertools for AWS Lambda (TypeScript) release the code is built and tested against. */
const POWERTOOLS_VERSION = '2.35.0';
/**
 * Its layer in the deployment's region: the public SSM parameter Powertools publishes per
 * release (`/aws/service/powertools/typescript/generic/all/<version>`), which CloudFormation
 * resolves to the layer version ARN (AWSLambdaPowertoolsTypeScriptV2:<n>) at deploy time.
 */
const DEFAULT_LAYER = `{{resolve:ssm:/aws/service/powertools/typescript/generic/all/${POWERTOOLS_VERSION}}}`;
const LAYER_ARN = /^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:layer:[A-Za-z0-9_-]+:\d+$/;

const XRAY_GRANT = {
  Effect: 'Allow',
  Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'],
  // X-Ray's PutTraceSegments and PutTelemetryRecords take no resource.
  Resource: ['*'],
};

function tracingEnabled(env) {
  const text = (env.TALLY_TRACING || 'false').trim();
  if (text !== 'true' && text !== 'false') {
    throw new Error(`TALLY_TRACING must be true or false, got "${text}"`);
  }
  return text === 'true';
}

/** TALLY_POWERTOOLS_LAYER_ARN (a layer version ARN), else the release's SSM parameter. */
function powertoolsLayer(env) {
  const arn = (env.TALLY_POWERTOOLS_LAYER_ARN || '').trim();
  if (arn === '') return DEFAULT_LAYER;
  if (!LAYER_ARN.test(arn)) {
    throw new Error(`TALLY_POWERTOOLS_LAYER_ARN: "${arn}" is not a Lambda layer version ARN`);
  }
  return arn;
}

class Tracing {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = {
      // After serverless-step-functions has read the state machines (package:initialize).
      'before:package:compileFunctions': () => this.traceStateMachines(),
      // After serverless-iam-roles-per-function has made the roles (listed before this plugin).
      'before:package:finalize': () => this.traceFunctions(),
    };
  }

  traceStateMachines() {
    if (!tracingEnabled(process.env)) return;
    const machines = this.serverless.service.stepFunctions?.stateMachines ?? {};
    for (const machine of Object.values(machines)) machine.tracingConfig = { enabled: true };
  }

  traceFunctions() {
    if (!tracingEnabled(process.env)) return;
    const layer = powertoolsLayer(process.env);
    const resources = this.serverless.service.provider.compiledCloudFormationTemplate.Resources;
    for (const resource of Object.values(resources)) {
      if (resource.Type !== 'AWS::Lambda::Function') continue;
      const layers = resource.Properties.Layers ?? [];
      if (!layers.includes(layer)) resource.Properties.Layers = [...layers, layer];
      const roleId = resource.Properties.Role?.['Fn::GetAtt']?.[0];
      const statements = resources[roleId]?.Properties.Policies?.[0]?.PolicyDocument.Statement;
      if (!statements) {
        throw new Error(
          `tracing: the role of a function (${roleId}) has no policy to grant X-Ray in`,
        );
      }
      const granted = statements.some((s) => JSON.stringify(s) === JSON.stringify(XRAY_GRANT));
      if (!granted) statements.push(XRAY_GRANT);
    }
  }
}

module.exports = Tracing;
/** For serverless.yml: `${file(./infra/serverless/tracing.cjs):enabled}`. */
module.exports.enabled = () => tracingEnabled(process.env);
