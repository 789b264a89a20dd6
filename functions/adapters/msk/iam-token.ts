// SASL OAUTHBEARER tokens for MSK IAM authentication. Kept apart from the bootstrap lookup so
// the AWS credential chain behind it is only loaded when IAM is in use.
//
// The token is AWS's documented one (what aws-msk-iam-sasl-signer-js makes): a SigV4-presigned
// `GET https://kafka.<region>.amazonaws.com/?Action=kafka-cluster:Connect`, base64url-encoded.
// Signed here with node:crypto rather than through that package, whose signer, SHA-256 and
// URL helpers added ~40 KB to every Kafka function's bundle and imported an `@aws-sdk/*` package
// (util-utf8-browser) that the Lambda runtime does not provide. A unit test compares the two
// token for token.

import { createHash, createHmac } from 'node:crypto';

/** What the MSK IAM signer returns: a signed token and its expiry in epoch milliseconds. */
export interface SignedToken {
  readonly token: string;
  readonly expiryTime: number;
}

/** Signs an MSK IAM token for the cluster's region; injectable so tests never reach AWS. */
export type SignToken = (region: string) => Promise<SignedToken>;

/** The shape a Kafka client's OAUTHBEARER provider hands to the broker. */
export interface OAuthBearerToken {
  readonly value: string;
  readonly lifetimeMs: number;
}

/** AWS credentials, as the SDK's providers give them. */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}

/** MSK accepts a token for at most 15 minutes. */
const EXPIRY_SECONDS = 900;
/** The signer MSK's own libraries name (brokers log it; AWS support asks for it). */
const USER_AGENT = 'aws-msk-iam-sasl-signer-js/1.0.3';

/** RFC 3986 encoding, as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
const rfc3986 = (text: string) =>
  encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );

const hmac = (key: Buffer | string, text: string) =>
  createHmac('sha256', key).update(text).digest();
const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** The signed token for `region` with `credentials` at `now` (ms). Pure: no I/O. */
export function signMskToken(
  credentials: AwsCredentials,
  region: string,
  now: number,
): SignedToken {
  if (!region) throw new Error('MSK IAM: the region is empty');
  if (!credentials.accessKeyId || !credentials.secretAccessKey) {
    throw new Error('MSK IAM: the AWS credentials are empty');
  }
  const host = `kafka.${region}.amazonaws.com`;
  const amzDate = new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const scope = `${day}/${region}/kafka-cluster/aws4_request`;
  const untilExpiry =
    credentials.expiration === undefined
      ? EXPIRY_SECONDS
      : Math.min((credentials.expiration.getTime() - now) / 1000, EXPIRY_SECONDS);
  const expires = Math.floor(untilExpiry);
  if (expires < 1) throw new Error('MSK IAM: the AWS credentials have expired');
  const query: Record<string, string> = {
    Action: 'kafka-cluster:Connect',
    'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    'X-Amz-Credential': `${credentials.accessKeyId}/${scope}`,
    'X-Amz-Date': amzDate,
    'X-Amz-Expires': String(expires),
    'X-Amz-SignedHeaders': 'host',
    ...(credentials.sessionToken && { 'X-Amz-Security-Token': credentials.sessionToken }),
  };
  const encode = (q: Record<string, string>) =>
    Object.keys(q)
      .sort()
      .map((k) => `${rfc3986(k)}=${rfc3986(q[k] as string)}`)
      .join('&');
  const canonicalRequest = [
    'GET',
    '/',
    encode(query),
    `host:${host}\n`,
    'host',
    sha256Hex(''), // no body
  ].join('\n');
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${credentials.secretAccessKey}`, day);
  for (const part of [region, 'kafka-cluster', 'aws4_request']) key = hmac(key, part);
  const signature = createHmac('sha256', key).update(stringToSign).digest('hex');
  const url = `https://${host}/?${encode({ ...query, 'X-Amz-Signature': signature, 'User-Agent': USER_AGENT })}`;
  const signedAt = Math.floor(now / 1000) * 1000;
  return {
    token: Buffer.from(url, 'utf8').toString('base64url'),
    expiryTime: signedAt + untilExpiry * 1000,
  };
}

/** Default signer: the Lambda execution role's credentials, via the SDK's default chain. */
export const signWithDefaultCredentials: SignToken = async (region) => {
  // Lazy, and provided by the Lambda runtime (not bundled): plaintext, TLS and SCRAM functions
  // never load it.
  const { defaultProvider } = await import('@aws-sdk/credential-provider-node');
  const credentials = await defaultProvider()();
  return signMskToken(credentials, region, Date.now());
};

/**
 * A token provider for the given region. No caching here: Kafka clients call it once per
 * connection and again before the previous token expires, which is exactly when a fresh
 * signature is needed.
 */
export function createIamTokenProvider(
  region: string,
  signToken: SignToken = signWithDefaultCredentials,
  now: () => number = Date.now,
): () => Promise<OAuthBearerToken> {
  return async () => {
    const { token, expiryTime } = await signToken(region);
    return { value: token, lifetimeMs: expiryTime - now() };
  };
}
