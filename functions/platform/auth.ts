import { type Caller, caller, parseTokens } from '../core/shared/access.js';
import { ConfigurationError, InvalidInputError, UnauthorizedError } from '../core/shared/errors.js';
import type { HttpEvent } from './http-event.js';

// Who is calling. In AWS (TALLY_AUTH=gateway) API Gateway's JWT authorizer has already checked
// the token; its claims name the caller (`sub` or `client_id`), its scopes (`scope`, space
// separated; `tally/publish`, …) and optionally its topics (`tally:topics`, comma separated
// patterns; absent: any topic the API allows). Locally (TALLY_AUTH=tokens) bearer tokens come from
// TALLY_AUTH_TOKENS, which `npm start` generates and prints.

type Authenticate = (event: HttpEvent) => Caller;

function fromGateway(event: HttpEvent): Caller {
  const context = (
    event.requestContext as {
      authorizer?: { jwt?: { claims?: unknown; scopes?: unknown }; iam?: { userArn?: unknown } };
    }
  )?.authorizer;
  // AWS_IAM routes (TALLY_API_AUTH=iam, docs/deploy.md): the caller's IAM policy allowed this
  // route (execute-api:Invoke on it is its scope), so the signed principal has the route's scope.
  if (context?.iam !== undefined && context.jwt === undefined) {
    return caller(String(context.iam.userArn ?? 'unknown'), ['tally/admin'], ['*']);
  }
  const authorizer = context?.jwt;
  const claims = (authorizer?.claims ?? undefined) as Record<string, unknown> | undefined;
  if (claims === undefined) {
    throw new UnauthorizedError('Authorization: no verified token (API Gateway authorizer)', {
      field: 'Authorization',
    });
  }
  const id = String(claims.sub ?? claims.client_id ?? 'unknown');
  const scopes = Array.isArray(authorizer?.scopes)
    ? (authorizer.scopes as unknown[]).map(String)
    : String(claims.scope ?? '')
        .split(' ')
        .filter(Boolean);
  const topics =
    typeof claims['tally:topics'] === 'string'
      ? (claims['tally:topics'] as string)
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean)
      : ['*'];
  return caller(id, scopes, topics);
}

function fromTokens(tokens: ReadonlyMap<string, Caller>): Authenticate {
  return (event) => {
    const value = Object.entries(event.headers ?? {}).find(
      ([name]) => name.toLowerCase() === 'authorization',
    )?.[1];
    const token = /^Bearer (\S+)$/i.exec(value ?? '')?.[1];
    if (token === undefined) {
      throw new UnauthorizedError('Authorization: a bearer token is required', {
        field: 'Authorization',
      });
    }
    const found = tokens.get(token);
    if (found === undefined) {
      throw new UnauthorizedError('Authorization: this bearer token is not valid', {
        field: 'Authorization',
      });
    }
    return found;
  };
}

/** The configured way to authenticate; a missing or bad configuration fails the cold start. */
export function loadAuthenticate(env: NodeJS.ProcessEnv = process.env): Authenticate {
  const mode = env.TALLY_AUTH?.trim();
  if (mode === 'gateway') return fromGateway;
  if (mode === 'tokens') {
    try {
      return fromTokens(parseTokens(env.TALLY_AUTH_TOKENS ?? '', 'TALLY_AUTH_TOKENS'));
    } catch (error) {
      if (error instanceof InvalidInputError) {
        throw new ConfigurationError(error.message, { field: 'TALLY_AUTH_TOKENS' });
      }
      throw error;
    }
  }
  throw new ConfigurationError(
    `TALLY_AUTH must be "gateway" (API Gateway JWT authorizer) or "tokens" (TALLY_AUTH_TOKENS), not "${mode ?? ''}"`,
    { field: 'TALLY_AUTH' },
  );
}
