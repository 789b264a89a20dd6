import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { requirePublishTo, requireScope } from '../../../functions/core/shared/access.js';
import { loadAuthenticate } from '../../../functions/platform/auth.js';
import { httpEvent } from '../../helpers/http-event.js';

const withClaims = (claims: Record<string, unknown> | undefined, scopes?: string[]) => {
  const event = httpEvent({ headers: { authorization: '' } });
  return {
    ...event,
    requestContext: {
      ...event.requestContext,
      ...(claims && { authorizer: { jwt: { claims, ...(scopes && { scopes }) } } }),
    },
  } as APIGatewayProxyEventV2;
};

describe('authentication behind API Gateway (TALLY_AUTH=gateway)', () => {
  const authenticate = loadAuthenticate({ TALLY_AUTH: 'gateway' });

  it('reads the caller, its scopes and its topics from the verified claims', () => {
    const who = authenticate(
      withClaims({
        sub: 'svc-orders',
        scope: 'tally/publish tally/read',
        'tally:topics': 'orders*, audit-log',
      }),
    );
    expect(who.id).toBe('svc-orders');
    expect(() => requireScope(who, 'publish')).not.toThrow();
    expect(() => requireScope(who, 'admin')).toThrow(/svc-orders lacks the admin scope/);
    expect(() => requirePublishTo(who, 'orders.v2')).not.toThrow();
    expect(() => requirePublishTo(who, 'audit-log')).not.toThrow();
    expect(() => requirePublishTo(who, 'payments')).toThrow(/may not publish to payments/);
  });

  it('takes the scopes API Gateway lists, and any topic when the claim is absent', () => {
    const who = authenticate(withClaims({ client_id: 'batch-job' }, ['tally/admin']));
    expect(who.id).toBe('batch-job');
    expect(() => requireScope(who, 'receipts')).not.toThrow(); // admin includes every scope
    expect(() => requirePublishTo(who, 'anything')).not.toThrow();
  });

  it('refuses an event without verified claims (401)', () => {
    expect(() => authenticate(withClaims(undefined))).toThrow(
      expect.objectContaining({ name: 'UnauthorizedError', status: 401 }),
    );
  });
});

describe('authentication configuration', () => {
  it('fails loudly without a mode, or with tokens that cannot work, naming the variable', () => {
    expect(() => loadAuthenticate({})).toThrow(/TALLY_AUTH must be "gateway".*or "tokens"/);
    expect(() => loadAuthenticate({ TALLY_AUTH: 'tokens', TALLY_AUTH_TOKENS: '{' })).toThrow(
      'TALLY_AUTH_TOKENS: not JSON',
    );
    expect(() =>
      loadAuthenticate({
        TALLY_AUTH: 'tokens',
        TALLY_AUTH_TOKENS: JSON.stringify({ short: { caller: 'x', scopes: ['read'] } }),
      }),
    ).toThrow(/TALLY_AUTH_TOKENS: each token \(16\+ characters\)/);
    expect(() =>
      loadAuthenticate({
        TALLY_AUTH: 'tokens',
        TALLY_AUTH_TOKENS: JSON.stringify({
          'a-long-enough-token': { caller: 'x', scopes: ['root'] },
        }),
      }),
    ).toThrow(/scopes: \[read\|publish\|receipts\|admin\]/);
  });

  it.each([null, 'admin', 7])('refuses a token whose entry is %j, naming the variable', (entry) => {
    expect(() =>
      loadAuthenticate({
        TALLY_AUTH: 'tokens',
        TALLY_AUTH_TOKENS: JSON.stringify({ 'a-long-enough-token': entry }),
      }),
    ).toThrow(expect.objectContaining({ field: 'TALLY_AUTH_TOKENS' }));
  });

  it('gives a token with an empty topic list no topic at all', () => {
    const authenticate = loadAuthenticate({
      TALLY_AUTH: 'tokens',
      TALLY_AUTH_TOKENS: JSON.stringify({
        'a-long-enough-token': { caller: 'x', scopes: ['publish'], topics: [] },
      }),
    });
    const who = authenticate(
      httpEvent({ headers: { authorization: 'Bearer a-long-enough-token' } }),
    );
    expect(() => requirePublishTo(who, 'orders')).toThrow(/x may not publish to orders/);
  });
});
