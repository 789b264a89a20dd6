// SCRAM credentials for Kafka, read from where the deployment keeps them: a Secrets Manager
// secret (MSK's own convention: a SecretString `{"username": …, "password": …}`), an SSM
// SecureString parameter holding the same JSON, or, for local runs, the environment.
//
// Nothing here ever puts a secret's content into an error or a log line: a malformed secret is
// reported by which field is missing or what type it has, never by what it contains.
import { ConfigurationError, DependencyUnavailableError } from '../../core/shared/errors.js';

export type ScramCredentialSource = (
  | { readonly from: 'environment'; readonly username: string; readonly password: string }
  | { readonly from: 'secrets-manager'; readonly secretId: string }
  | { readonly from: 'ssm'; readonly parameterName: string }
) & {
  /** What the credentials are for and the variables that name them (default: Kafka's). */
  readonly names?: CredentialNames;
};

/** The settings of one set of credentials, for messages. */
export interface CredentialNames {
  readonly what: string;
  readonly secretId: string;
  readonly parameter: string;
  readonly username: string;
  readonly password: string;
}

const KAFKA_NAMES: CredentialNames = {
  what: 'the Kafka SCRAM credentials',
  secretId: 'KAFKA_SASL_SECRET_ID',
  parameter: 'KAFKA_SASL_PARAMETER',
  username: 'KAFKA_SASL_USERNAME',
  password: 'KAFKA_SASL_PASSWORD',
};

export interface ScramCredentials {
  readonly username: string;
  readonly password: string;
}

export interface ReadOptions {
  readonly region: string;
  /** Per attempt, connection and answer alike. */
  readonly timeoutMs: number;
}

/** Where the credentials came from, for messages: the setting and its value, never the secret. */
export function describeSource(source: ScramCredentialSource): string {
  const names = source.names ?? KAFKA_NAMES;
  switch (source.from) {
    case 'environment':
      return `${names.username}/${names.password}`;
    case 'secrets-manager':
      return `Secrets Manager secret "${source.secretId}" (${names.secretId})`;
    case 'ssm':
      return `SSM parameter "${source.parameterName}" (${names.parameter})`;
  }
}

function fieldOf(source: ScramCredentialSource): string {
  const names = source.names ?? KAFKA_NAMES;
  return source.from === 'secrets-manager'
    ? names.secretId
    : source.from === 'ssm'
      ? names.parameter
      : names.username;
}

/**
 * Reads the credentials once. Errors: a secret that is missing, unreadable for this role or
 * malformed is a `ConfigurationError` (it will not fix itself); a service that cannot be reached
 * is a `DependencyUnavailableError` (retriable).
 */
export async function readScramCredentials(
  source: ScramCredentialSource,
  options: ReadOptions,
): Promise<ScramCredentials> {
  if (source.from === 'environment') {
    return { username: source.username, password: source.password };
  }
  let text: string | undefined;
  try {
    text =
      source.from === 'secrets-manager'
        ? await secretString(source.secretId, options)
        : await parameterString(source.parameterName, options);
  } catch (error) {
    throw classify(error, source);
  }
  if (text === undefined) {
    throw new ConfigurationError(
      `${describeSource(source)} has no string value; it must hold {"username": …, "password": …} as text`,
      { field: fieldOf(source) },
    );
  }
  return parseCredentials(text, source);
}

/** `{"username": "…", "password": "…"}`; other fields are ignored. */
export function parseCredentials(text: string, source: ScramCredentialSource): ScramCredentials {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text it choked on: never pass it on.
    throw new ConfigurationError(
      `${describeSource(source)} is not JSON; it must hold {"username": …, "password": …}`,
      { field: fieldOf(source) },
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigurationError(
      `${describeSource(source)} must be a JSON object {"username": …, "password": …}`,
      { field: fieldOf(source) },
    );
  }
  const { username, password } = parsed as Record<string, unknown>;
  for (const [name, value] of [
    ['username', username],
    ['password', password],
  ] as const) {
    if (typeof value !== 'string' || value.length === 0) {
      throw new ConfigurationError(
        `${describeSource(source)}: "${name}" must be a non-empty string, got ${value === undefined ? 'nothing' : typeof value}`,
        { field: fieldOf(source) },
      );
    }
  }
  return { username: username as string, password: password as string };
}

const requestHandler = (timeoutMs: number) => ({
  connectionTimeout: timeoutMs,
  requestTimeout: timeoutMs,
  throwOnRequestTimeout: true,
});

// The SDK clients are loaded only when a function is configured to read a secret, so the
// other functions never pay for them at cold start. Their endpoints follow the SDK's own
// settings (AWS_ENDPOINT_URL_SECRETS_MANAGER, AWS_ENDPOINT_URL_SSM).
async function secretString(secretId: string, options: ReadOptions): Promise<string | undefined> {
  const { SecretsManagerClient, GetSecretValueCommand } = await import(
    '@aws-sdk/client-secrets-manager'
  );
  const client = new SecretsManagerClient({
    region: options.region,
    maxAttempts: 2,
    requestHandler: requestHandler(options.timeoutMs),
  });
  try {
    return (await client.send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString;
  } finally {
    client.destroy();
  }
}

async function parameterString(name: string, options: ReadOptions): Promise<string | undefined> {
  const { SSMClient, GetParameterCommand } = await import('@aws-sdk/client-ssm');
  const client = new SSMClient({
    region: options.region,
    maxAttempts: 2,
    requestHandler: requestHandler(options.timeoutMs),
  });
  try {
    const { Parameter } = await client.send(
      new GetParameterCommand({ Name: name, WithDecryption: true }),
    );
    return Parameter?.Value;
  } finally {
    client.destroy();
  }
}

/** Errors the caller's configuration or permissions cause; anything else may pass. */
const CONFIGURATION_ERRORS = new Set([
  'ResourceNotFoundException',
  'ParameterNotFound',
  'ParameterVersionNotFound',
  'AccessDeniedException',
  'DecryptionFailure',
  'InvalidKeyId',
  'InvalidParameterException',
  'InvalidRequestException',
  'ValidationException',
  'UnrecognizedClientException',
]);

function classify(error: unknown, source: ScramCredentialSource): Error {
  const name = error instanceof Error ? error.name : 'Error';
  // The SDK's messages name the resource and the action; they never carry the secret's value.
  const reason = error instanceof Error ? error.message : String(error);
  if (CONFIGURATION_ERRORS.has(name)) {
    return new ConfigurationError(
      `cannot read ${(source.names ?? KAFKA_NAMES).what} from ${describeSource(source)}: ${name}: ${reason}`,
      { field: fieldOf(source), cause: error },
    );
  }
  return new DependencyUnavailableError(
    `could not reach ${source.from === 'ssm' ? 'SSM' : 'Secrets Manager'} for ${(source.names ?? KAFKA_NAMES).what} in ${describeSource(source)} (${name}: ${reason}); nothing was sent`,
    { cause: error },
  );
}
