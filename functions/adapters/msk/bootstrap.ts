// Turns an MSK cluster ARN into a client-neutral description of how to connect to it. Brokers
// are looked up from the control plane rather than configured, so a broker replacement or a
// new listener never needs a redeploy; kafkajs specifics live in functions/adapters/kafka/.
import type { GetBootstrapBrokersCommandOutput, KafkaClient } from '@aws-sdk/client-kafka';
import { createIamTokenProvider, type OAuthBearerToken, type SignToken } from './iam-token.js';

export type { OAuthBearerToken, SignToken } from './iam-token.js';

export type KafkaAuth =
  | { readonly mechanism: 'none' }
  | {
      readonly mechanism: 'iam';
      readonly region: string;
      /** SASL OAUTHBEARER token provider; call it per connection, tokens expire. */
      token(): Promise<OAuthBearerToken>;
    }
  | { readonly mechanism: 'scram-sha-512'; readonly username: string; readonly password: string };

export interface KafkaConnection {
  /** host:port */
  readonly brokers: readonly string[];
  readonly tls: boolean;
  readonly auth: KafkaAuth;
}

/** 'tls' means server-authenticated TLS with no client identity (no mTLS certificates). */
export type MskAuthMode = 'iam' | 'scram' | 'tls' | 'plaintext';

export interface MskBootstrapOptions {
  readonly client: KafkaClient;
  readonly clusterArn: string;
  readonly auth: MskAuthMode;
  /** The cluster's region: IAM tokens must be signed for it. */
  readonly region: string;
  /** Required when auth is 'scram'. */
  readonly scram?: { readonly username: string; readonly password: string };
  readonly signToken?: SignToken;
}

export interface MskBootstrap {
  resolve(): Promise<KafkaConnection>;
}

type BrokerField = keyof GetBootstrapBrokersCommandOutput & `BootstrapBrokerString${string}`;

const LISTENERS: Record<MskAuthMode, { field: BrokerField; tls: boolean; hint: string }> = {
  iam: { field: 'BootstrapBrokerStringSaslIam', tls: true, hint: 'IAM authentication' },
  scram: { field: 'BootstrapBrokerStringSaslScram', tls: true, hint: 'SASL/SCRAM authentication' },
  tls: { field: 'BootstrapBrokerStringTls', tls: true, hint: 'TLS encryption' },
  plaintext: { field: 'BootstrapBrokerString', tls: false, hint: 'plaintext traffic' },
};

const CLUSTER_ARN =
  /^arn:aws[a-z-]*:kafka:([a-z]{2}(?:-[a-z]+)+-\d+):\d{12}:cluster\/[A-Za-z0-9-]+\/[A-Za-z0-9-]+$/;

// Asking again cannot fix these: the cluster is gone, the request is wrong, or access is denied.
const PERMANENT = new Set([
  'NotFoundException',
  'BadRequestException',
  'ForbiddenException',
  'UnauthorizedException',
  'CredentialsProviderError',
]);
const THROTTLING = new Set(['ThrottlingException', 'TooManyRequestsException']);

/** The control plane could not say how to reach the cluster. Never carries secrets. */
export class MskBootstrapError extends Error {
  override readonly name = 'MskBootstrapError';
  readonly code = 'MSK_BOOTSTRAP_FAILED';
  /** Whether a later attempt (e.g. the next invocation) may succeed. */
  readonly retriable: boolean;

  constructor(message: string, options: { retriable: boolean; cause?: unknown }) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.retriable = options.retriable;
  }
}

export function createMskBootstrap(options: MskBootstrapOptions): MskBootstrap {
  const { client, clusterArn } = options;
  const listener = validate(options);
  const auth = authFor(options);
  let inFlight: Promise<KafkaConnection> | undefined;

  const lookup = async (): Promise<KafkaConnection> => {
    let output: GetBootstrapBrokersCommandOutput;
    try {
      // Loaded here, not at the top: an import of an SDK package is loaded with the bundle.
      const { GetBootstrapBrokersCommand } = await import('@aws-sdk/client-kafka');
      output = await client.send(new GetBootstrapBrokersCommand({ ClusterArn: clusterArn }));
    } catch (error) {
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      throw new MskBootstrapError(
        `GetBootstrapBrokers failed for MSK cluster ${clusterArn} (${reason})`,
        { retriable: isRetriable(error), cause: error },
      );
    }
    const brokers = (output[listener.field] ?? '')
      .split(',')
      .map((broker) => broker.trim())
      .filter((broker) => broker !== '');
    if (brokers.length === 0) {
      throw new MskBootstrapError(
        `MSK cluster ${clusterArn} has no ${listener.field}: is ${listener.hint} enabled on it?`,
        { retriable: false },
      );
    }
    return { brokers: Object.freeze(brokers), tls: listener.tls, auth };
  };

  return {
    // One lookup per container: brokers rarely move, and every warm invocation would otherwise
    // pay a control-plane round trip against an account-wide, throttled API.
    resolve() {
      if (inFlight) return inFlight;
      const attempt = lookup();
      inFlight = attempt;
      // Forget failures so the next call retries instead of replaying the same error forever.
      attempt.catch(() => {
        if (inFlight === attempt) inFlight = undefined;
      });
      return attempt;
    },
  };
}

// Misconfiguration should fail the cold start, not the first record.
function validate(options: MskBootstrapOptions): (typeof LISTENERS)[MskAuthMode] {
  const arnRegion = CLUSTER_ARN.exec(options.clusterArn)?.[1];
  if (arnRegion === undefined) {
    throw new Error(
      `MSK_CLUSTER_ARN is not an MSK cluster ARN (arn:aws:kafka:<region>:<account>:cluster/<name>/<id>): ${JSON.stringify(options.clusterArn)}`,
    );
  }
  if (options.region !== arnRegion) {
    throw new Error(
      `region ${JSON.stringify(options.region)} does not match MSK_CLUSTER_ARN's region ${arnRegion}`,
    );
  }
  if (!Object.hasOwn(LISTENERS, options.auth)) {
    throw new Error(
      `MSK auth must be one of ${Object.keys(LISTENERS).join(', ')}, got ${JSON.stringify(options.auth)}`,
    );
  }
  return LISTENERS[options.auth];
}

function authFor({ auth, region, scram, signToken }: MskBootstrapOptions): KafkaAuth {
  switch (auth) {
    case 'iam':
      return { mechanism: 'iam', region, token: createIamTokenProvider(region, signToken) };
    case 'scram':
      if (!scram?.username) throw new Error(`MSK auth 'scram' needs scram.username`);
      if (!scram.password) throw new Error(`MSK auth 'scram' needs scram.password`);
      return { mechanism: 'scram-sha-512', username: scram.username, password: scram.password };
    default:
      return { mechanism: 'none' };
  }
}

function isRetriable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (PERMANENT.has(error.name)) return false;
  if (THROTTLING.has(error.name)) return true;
  const sdk = error as { $fault?: unknown; $metadata?: { httpStatusCode?: unknown } };
  const status = sdk.$metadata?.httpStatusCode;
  if (typeof status === 'number') return status === 429 || status >= 500;
  // No HTTP status and no fault: the request never got an answer (DNS, reset, timeout).
  return sdk.$fault === 'server' || sdk.$fault === undefined;
}
