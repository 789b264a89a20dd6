import { readScramCredentials } from '../adapters/secrets/scram-credentials.js';
import type { SchemaEncoder } from '../core/schema-input.js';
import type { PublishConfig } from '../platform/config.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';

/**
 * The container's schema encoder, built on the first record that needs one, or undefined when
 * no registry is configured (such records are then REST Proxy's 42206). The registry adapter and
 * its codecs (avsc, protobufjs, ajv: about as big as the rest of the bundle) are imported here,
 * dynamically, so a cold start that sees no schema record never loads them; the credentials are
 * read once, from Secrets Manager or the environment, and handed to the registry client only.
 */
export function schemaEncoderOf(config: PublishConfig): (() => Promise<SchemaEncoder>) | undefined {
  const registry = config.schemaRegistry;
  if (registry === undefined) return undefined;
  return lazyRuntime(async () => {
    const [{ createRegistryEncoder }, credentials] = await Promise.all([
      import('../adapters/schema-registry/record-encoder.js'),
      registry.credentials &&
        readScramCredentials(registry.credentials, {
          region: config.region,
          timeoutMs: config.dynamodbTimeoutMs,
        }),
    ]);
    return createRegistryEncoder({
      url: registry.url,
      timeoutMs: registry.timeoutMs,
      ...(credentials && { credentials }),
    });
  });
}
