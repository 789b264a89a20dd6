import type {
  createGlueEncoder,
  createRegistryEncoder,
} from '../adapters/schema-registry/record-encoder.js';
import type { SchemaEncoder } from '../core/rest-proxy/schema-input.js';
import type { PublishConfig } from '../platform/config.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';
import { tracing } from '../platform/tracing.js';

/**
 * Imports the registry adapter and its codecs (avsc, protobufjs, ajv: about as big as the rest
 * of the bundle). Each route that serializes with schemas passes its own dynamic import
 * (`./produce-handler.schema.js`): esbuild makes it a chunk named after the route, which
 * serverless-esbuild packs with that function only, and a cold start never loads it.
 */
export type SchemaCodecs = () => Promise<{
  readonly createRegistryEncoder: typeof createRegistryEncoder;
  readonly createGlueEncoder: typeof createGlueEncoder;
}>;

/**
 * The container's schema encoder, built on the first record that needs one with the codecs
 * its route imports, or undefined when no registry is configured (such records are then REST
 * Proxy's 42206). The credentials are read once, from Secrets Manager or the environment, and
 * handed to the registry client only.
 */
export function schemaEncoderOf(
  config: PublishConfig,
): ((codecs: SchemaCodecs) => Promise<SchemaEncoder>) | undefined {
  const registry = config.schemaRegistry;
  const glue = config.glueSchemaRegistry;
  let load: SchemaCodecs | undefined;
  const use = (codecs: SchemaCodecs) => {
    // Every route of a container imports the same module: the first one's import is used.
    load ??= codecs;
  };
  if (glue !== undefined) {
    // AWS Glue: the Lambda role's credentials, the SDK client loaded with the codecs.
    const encoder = lazyRuntime(async () =>
      (await (load as SchemaCodecs)()).createGlueEncoder({
        region: config.region,
        endpoint: glue.endpoint,
        registryName: glue.registryName,
        autoRegister: glue.autoRegister,
        compression: glue.compression,
        captureClient: (client) => tracing.captureClient(client),
      }),
    );
    return (codecs) => {
      use(codecs);
      return encoder();
    };
  }
  if (registry === undefined) return undefined;
  const credentialsSource = registry.credentials;
  const encoder = lazyRuntime(async () => {
    const [{ createRegistryEncoder }, credentials] = await Promise.all([
      (load as SchemaCodecs)(),
      credentialsSource &&
        import('../adapters/secrets/scram-credentials.js').then(({ readScramCredentials }) =>
          readScramCredentials(credentialsSource, {
            region: config.region,
            timeoutMs: config.dynamodbTimeoutMs,
          }),
        ),
    ]);
    return createRegistryEncoder({
      url: registry.url,
      timeoutMs: registry.timeoutMs,
      ...(credentials && { credentials }),
    });
  });
  return (codecs) => {
    use(codecs);
    return encoder();
  };
}
