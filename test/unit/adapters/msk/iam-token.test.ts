import { generateAuthTokenFromCredentialsProvider } from 'aws-msk-iam-sasl-signer-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type AwsCredentials, signMskToken } from '../../../../functions/adapters/msk/iam-token.js';

// Tally signs MSK IAM tokens itself (node:crypto); AWS's own signer library is the peer it must
// agree with, token for token, at the same instant and with the same credentials.

const AT = Date.UTC(2026, 10, 30, 21, 4, 5, 678);

async function peer(credentials: AwsCredentials, region: string) {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(AT);
  try {
    return await generateAuthTokenFromCredentialsProvider({
      region,
      awsCredentialsProvider: async () => credentials,
    });
  } finally {
    vi.useRealTimers();
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe('signMskToken', () => {
  const cases: Array<[string, AwsCredentials, string]> = [
    [
      'long-term keys',
      { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
      'eu-west-1',
    ],
    [
      'a role session (token with / + =)',
      {
        accessKeyId: 'ASIAEXAMPLE',
        secretAccessKey: 'secret/with+odd=chars',
        sessionToken: 'IQoJb3JpZ2luX2VjE//////////wEaCWV1LXdlc3QtMSJHMEUCIQ+abc/def==',
        expiration: new Date(AT + 3_600_000),
      },
      'us-east-1',
    ],
    [
      'credentials expiring in 10 minutes (whole seconds)',
      {
        accessKeyId: 'ASIAEXAMPLE2',
        secretAccessKey: 's',
        sessionToken: 't',
        expiration: new Date(Math.floor(AT / 1000) * 1000 + 600_000 + 678),
      },
      'ap-southeast-2',
    ],
  ];

  it.each(cases)('gives the token AWS’s own signer gives: %s', async (_, credentials, region) => {
    const expected = await peer(credentials, region);
    const mine = signMskToken(credentials, region, AT);
    expect(mine.token).toBe(expected.token);
    expect(mine.expiryTime).toBe(expected.expiryTime);
    const url = new URL(Buffer.from(mine.token, 'base64url').toString('utf8'));
    expect(url.host).toBe(`kafka.${region}.amazonaws.com`);
    expect(url.searchParams.get('Action')).toBe('kafka-cluster:Connect');
  });

  it('signs differently for another secret, region or instant (the signature covers them)', () => {
    const credentials = { accessKeyId: 'AKID', secretAccessKey: 'one' };
    const base = signMskToken(credentials, 'eu-west-1', AT).token;
    expect(
      signMskToken({ ...credentials, secretAccessKey: 'two' }, 'eu-west-1', AT).token,
    ).not.toBe(base);
    expect(signMskToken(credentials, 'eu-west-2', AT).token).not.toBe(base);
    expect(signMskToken(credentials, 'eu-west-1', AT + 1000).token).not.toBe(base);
  });

  it('refuses empty credentials, an empty region and expired credentials, naming them', () => {
    expect(() => signMskToken({ accessKeyId: '', secretAccessKey: 'x' }, 'eu-west-1', AT)).toThrow(
      /credentials are empty/,
    );
    expect(() => signMskToken({ accessKeyId: 'a', secretAccessKey: 'x' }, '', AT)).toThrow(
      /region is empty/,
    );
    expect(() =>
      signMskToken(
        { accessKeyId: 'a', secretAccessKey: 'x', expiration: new Date(AT - 1) },
        'eu-west-1',
        AT,
      ),
    ).toThrow(/expired/);
  });

  it('never writes a fractional X-Amz-Expires (credentials expiring mid-second)', () => {
    const { token } = signMskToken(
      { accessKeyId: 'a', secretAccessKey: 'x', expiration: new Date(AT + 300_500) },
      'eu-west-1',
      AT,
    );
    const url = new URL(Buffer.from(token, 'base64url').toString('utf8'));
    expect(url.searchParams.get('X-Amz-Expires')).toBe('300');
  });
});
