import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { requirePublishTo, requireScope } from '../../../functions/core/shared/access.js';
import { loadAuthenticate } from '../../../functions/platform/auth.js';
import { httpEvent } from '../../helpers/http-event.js';

// TALLY_API_AUTH=iam (docs/deploy.md): API Gateway checked the SigV4 signature and the caller's
// execute-api:Invoke on the route before the function runs; the function names the principal.
const signed = (iam: Record<string, unknown>) => {
  const event = httpEvent({ headers: {} });
  return {
    ...event,
    requestContext: { ...event.requestContext, authorizer: { iam } },
  } as unknown as APIGatewayProxyEventV2;
};

describe('authentication behind an AWS_IAM route (TALLY_AUTH=gateway)', () => {
  const authenticate = loadAuthenticate({ TALLY_AUTH: 'gateway' });

  it('names the signed principal, whose IAM policy already allowed the route', () => {
    const who = authenticate(
      signed({
        accountId: '123456789012',
        userArn: 'arn:aws:sts::123456789012:assumed-role/orders-service/i-1',
      }),
    );
    expect(who.id).toBe('arn:aws:sts::123456789012:assumed-role/orders-service/i-1');
    expect(() => requireScope(who, 'publish')).not.toThrow();
    expect(() => requirePublishTo(who, 'orders')).not.toThrow();
  });

  it('still refuses a request that reached the function with no authorizer context', () => {
    expect(() => authenticate(httpEvent({ headers: {} }))).toThrow(/no verified token/);
  });
});
