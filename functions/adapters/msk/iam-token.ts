// SASL OAUTHBEARER tokens for MSK IAM authentication. Kept apart from the bootstrap lookup so
// the signer (and the AWS credential chain behind it) is only loaded when IAM is in use.

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

/** Default signer: the Lambda execution role's credentials, via the default provider chain. */
export const signWithDefaultCredentials: SignToken = async (region) => {
  // Lazy so that plaintext/TLS/SCRAM functions never pay the signer's cold-start cost.
  const { generateAuthToken } = await import('aws-msk-iam-sasl-signer-js');
  const { token, expiryTime } = await generateAuthToken({ region });
  return { token, expiryTime };
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
