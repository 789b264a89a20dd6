import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { InvalidInputError, NotFoundError } from '../core/shared/errors.js';

// API Gateway's HTTP event and answer, and what a route reads from the event: headers, path
// parameters, the body. The middy stack that runs routes is http.ts.

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResponse = APIGatewayProxyStructuredResultV2;

export function header(event: HttpEvent, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted) return value;
  }
  return undefined;
}

export function pathParameter(event: HttpEvent, name: string): string {
  return decodePathParameter(name, event.pathParameters?.[name]);
}

/** A path parameter as the route gave it, percent-decoded: a 400 naming it when it does not decode. */
export function decodePathParameter(name: string, value: string | undefined): string {
  if (value === undefined) throw new Error(`route has no {${name}} parameter`);
  try {
    return decodeURIComponent(value);
  } catch {
    throw new InvalidInputError(`${name}: not a valid percent-encoded path segment`, {
      field: name,
    });
  }
}

/**
 * A path parameter naming something stored under it (a consumer group, an audit): 1–255
 * characters and at most 1,024 bytes (DynamoDB's key limit), else a 400 naming it.
 */
export function idParameter(event: HttpEvent, name: string): string {
  const value = pathParameter(event, name);
  if (value.length === 0 || value.length > 255 || Buffer.byteLength(value) > 1024) {
    throw new InvalidInputError(`${name}: 1-255 characters`, { field: name });
  }
  return value;
}

/** An event's body as API Gateway gives it: text, or base64 of the bytes. */
export type HttpBody = Pick<HttpEvent, 'body' | 'isBase64Encoded'>;

/** The raw body bytes, whatever API Gateway did to them. */
export function bodyBytes(event: HttpBody): Buffer {
  if (event.body === undefined || event.body === null) return Buffer.alloc(0);
  return Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
}

/** Where this API is reached, for `self` links: API Gateway's domain, or the Host header locally. */
export function baseUrl(event: HttpEvent): string {
  const domain = event.requestContext?.domainName;
  const host = domain && !domain.startsWith('offlineContext') ? domain : header(event, 'host');
  if (host === undefined) return '';
  const local = /^(127\.|localhost|\[::1\])/.test(host);
  return `${header(event, 'x-forwarded-proto') ?? (local ? 'http' : 'https')}://${host}`;
}

/** 404 unless the path's cluster is the one this API serves. */
export function requireCluster(requested: string, actual: string): void {
  if (requested !== actual) {
    throw new NotFoundError(
      `cluster_id: cluster ${requested} not found (this API serves ${actual})`,
      {
        field: 'cluster_id',
      },
    );
  }
}

/** The body as one JSON value; a 400 naming the body when it is not JSON. */
export function jsonBody(event: HttpEvent): unknown {
  const text = bodyBytes(event).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidInputError('body: not valid JSON', { field: 'body' });
  }
}
