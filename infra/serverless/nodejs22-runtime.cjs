'use strict';

// Serverless Framework v3's configuration schema predates the nodejs22.x Lambda runtime, which
// v3 otherwise packages and deploys unchanged. Allowing it here lets serverless.yml keep
// `configValidationMode: error`, so every other configuration mistake still fails the build.
class Nodejs22RuntimeSchema {
  constructor(serverless) {
    const runtime = serverless.configSchemaHandler.schema.definitions.awsLambdaRuntime;
    if (runtime && Array.isArray(runtime.enum) && !runtime.enum.includes('nodejs22.x')) {
      runtime.enum.push('nodejs22.x');
    }
  }
}

module.exports = Nodejs22RuntimeSchema;
