import { describe, expect, it } from 'vitest';
import { readScramCredentials } from '../../../functions/adapters/secrets/scram-credentials.js';
import { ConfigurationError } from '../../../functions/core/shared/errors.js';
import { loadPublishConfig } from '../../../functions/platform/config.js';

// The publish functions' schema registry settings, read at cold start: a URL, and basic auth
// from a Secrets Manager secret or (locally) the environment. A mistake names its variable.

const BASE = {
  TALLY_STREAMS_TABLE: 'tally-streams',
  TALLY_LEDGER_TABLE: 'tally-ledger',
  TALLY_RESERVATIONS_TABLE: 'tally-reservations',
  KAFKA_BROKERS: 'localhost:9092',
};
const URL = 'https://registry.example/apis/ccompat/v7';

function refused(env: Record<string, string>, field: string): string {
  try {
    loadPublishConfig({ ...BASE, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).field).toBe(field);
    return (error as Error).message;
  }
  throw new Error('the environment was accepted');
}

describe('TALLY_SCHEMA_REGISTRY_* settings', () => {
  it('is no registry without a URL (schema records stay 42206)', () => {
    expect(loadPublishConfig(BASE).schemaRegistry).toBeUndefined();
  });

  it('reads the URL, a timeout, and no credentials by default', () => {
    expect(
      loadPublishConfig({ ...BASE, TALLY_SCHEMA_REGISTRY_URL: ` ${URL} ` }).schemaRegistry,
    ).toEqual({
      url: URL,
      timeoutMs: 5000,
      credentials: undefined,
    });
    expect(
      loadPublishConfig({
        ...BASE,
        TALLY_SCHEMA_REGISTRY_URL: URL,
        TALLY_SCHEMA_REGISTRY_TIMEOUT_MS: '1500',
      }).schemaRegistry?.timeoutMs,
    ).toBe(1500);
  });

  it('takes basic auth from a Secrets Manager secret, or from the environment', () => {
    const secret = loadPublishConfig({
      ...BASE,
      TALLY_SCHEMA_REGISTRY_URL: URL,
      TALLY_SCHEMA_REGISTRY_SECRET_ID: 'tally/registry',
    }).schemaRegistry;
    expect(secret?.credentials).toMatchObject({
      from: 'secrets-manager',
      secretId: 'tally/registry',
    });
    const local = loadPublishConfig({
      ...BASE,
      TALLY_SCHEMA_REGISTRY_URL: URL,
      TALLY_SCHEMA_REGISTRY_USERNAME: 'u',
      TALLY_SCHEMA_REGISTRY_PASSWORD: 'p',
    }).schemaRegistry;
    expect(local?.credentials).toMatchObject({ from: 'environment', username: 'u', password: 'p' });
  });

  it('names the variable of each mistake', () => {
    expect(
      refused({ TALLY_SCHEMA_REGISTRY_URL: 'registry:8081' }, 'TALLY_SCHEMA_REGISTRY_URL'),
    ).toMatch(/http\(s\) URL/);
    expect(
      refused({ TALLY_SCHEMA_REGISTRY_URL: 'ftp://registry' }, 'TALLY_SCHEMA_REGISTRY_URL'),
    ).toContain('ftp://registry');
    refused({ TALLY_SCHEMA_REGISTRY_SECRET_ID: 's' }, 'TALLY_SCHEMA_REGISTRY_URL');
    refused({ TALLY_SCHEMA_REGISTRY_PASSWORD: 'p' }, 'TALLY_SCHEMA_REGISTRY_URL');
    refused(
      { TALLY_SCHEMA_REGISTRY_URL: URL, TALLY_SCHEMA_REGISTRY_USERNAME: 'u' },
      'TALLY_SCHEMA_REGISTRY_PASSWORD',
    );
    expect(
      refused(
        {
          TALLY_SCHEMA_REGISTRY_URL: URL,
          TALLY_SCHEMA_REGISTRY_SECRET_ID: 's',
          TALLY_SCHEMA_REGISTRY_USERNAME: 'u',
        },
        'TALLY_SCHEMA_REGISTRY_SECRET_ID',
      ),
    ).toContain('not both');
    refused(
      { TALLY_SCHEMA_REGISTRY_URL: URL, TALLY_SCHEMA_REGISTRY_TIMEOUT_MS: '0' },
      'TALLY_SCHEMA_REGISTRY_TIMEOUT_MS',
    );
  });

  it("reports a secret it cannot read by the registry's own variable, never Kafka's", async () => {
    const source = loadPublishConfig({
      ...BASE,
      TALLY_SCHEMA_REGISTRY_URL: URL,
      TALLY_SCHEMA_REGISTRY_SECRET_ID: 'tally/registry',
    }).schemaRegistry?.credentials;
    expect(source).toBeDefined();
    // An endpoint nothing listens on: Secrets Manager cannot be reached (retriable, 503).
    process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = 'http://127.0.0.1:9';
    try {
      const error = await readScramCredentials(source as NonNullable<typeof source>, {
        region: 'us-east-1',
        timeoutMs: 300,
      }).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 503 });
      expect(String((error as Error).message)).toContain('TALLY_SCHEMA_REGISTRY_SECRET_ID');
      expect(String((error as Error).message)).toContain("the schema registry's credentials");
      expect(String((error as Error).message)).not.toContain('KAFKA_SASL');
    } finally {
      delete process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER;
    }
  });
});

describe('TALLY_SCHEMA_REGISTRY=glue settings', () => {
  it('is no Glue registry unless selected (`1`, the local stack, is the Confluent one)', () => {
    expect(loadPublishConfig(BASE).glueSchemaRegistry).toBeUndefined();
    expect(
      loadPublishConfig({ ...BASE, TALLY_SCHEMA_REGISTRY: '1' }).glueSchemaRegistry,
    ).toBeUndefined();
  });

  it("selects Glue: Glue's default registry, auto-registration off, no compression", () => {
    const config = loadPublishConfig({ ...BASE, TALLY_SCHEMA_REGISTRY: 'glue' });
    expect(config.glueSchemaRegistry).toEqual({
      registryName: 'default-registry',
      autoRegister: false,
      compression: 'none',
      endpoint: undefined,
    });
    expect(config.schemaRegistry).toBeUndefined();
    expect(
      loadPublishConfig({
        ...BASE,
        TALLY_SCHEMA_REGISTRY: 'glue',
        TALLY_GLUE_REGISTRY_NAME: 'orders-registry',
        TALLY_GLUE_AUTO_REGISTER: 'true',
        TALLY_GLUE_COMPRESSION: 'zlib',
        TALLY_GLUE_ENDPOINT: 'http://127.0.0.1:4599',
      }).glueSchemaRegistry,
    ).toEqual({
      registryName: 'orders-registry',
      autoRegister: true,
      compression: 'zlib',
      endpoint: 'http://127.0.0.1:4599',
    });
  });

  it('refuses an unknown registry kind, both registries, and values Glue or Tally do not take', () => {
    expect(refused({ TALLY_SCHEMA_REGISTRY: 'apicurio' }, 'TALLY_SCHEMA_REGISTRY')).toMatch(
      /must be glue or confluent/,
    );
    expect(
      refused(
        { TALLY_SCHEMA_REGISTRY: 'glue', TALLY_SCHEMA_REGISTRY_URL: URL },
        'TALLY_SCHEMA_REGISTRY_URL',
      ),
    ).toMatch(/both set/);
    expect(
      refused(
        { TALLY_SCHEMA_REGISTRY: 'glue', TALLY_GLUE_REGISTRY_NAME: 'a/b' },
        'TALLY_GLUE_REGISTRY_NAME',
      ),
    ).toMatch(/255/);
    expect(
      refused(
        { TALLY_SCHEMA_REGISTRY: 'glue', TALLY_GLUE_AUTO_REGISTER: 'yes' },
        'TALLY_GLUE_AUTO_REGISTER',
      ),
    ).toMatch(/true or false/);
    expect(
      refused(
        { TALLY_SCHEMA_REGISTRY: 'glue', TALLY_GLUE_COMPRESSION: 'gzip' },
        'TALLY_GLUE_COMPRESSION',
      ),
    ).toMatch(/none or zlib/);
  });
});
