// GET /openapi.json — Tally's OpenAPI 3.1 document (openapi/document.ts), or with ?version=3.0 its
// 3.0 rendering (openapi/openapi-30.ts). Behind the `read` scope like every other route (README,
// Access): any token of ours may fetch it, and the admin surface it describes is not published to
// anonymous callers.

import { InvalidInputError } from '../core/shared/errors.js';
import { httpHandler } from '../platform/http.js';
import { openApiDocument } from './document.js';
import { openApi30 } from './openapi-30.js';

/** Rendered on first request, once per container. */
const bodies = new Map<string, () => string>([
  ['3.1', () => JSON.stringify(openApiDocument)],
  ['3.0', () => JSON.stringify(openApi30(openApiDocument))],
]);
const rendered = new Map<string, string>();

export const handler = httpHandler('read', async (event) => {
  const version = event.queryStringParameters?.version ?? '3.1';
  const render = bodies.get(version);
  if (render === undefined) {
    throw new InvalidInputError('version: 3.0 or 3.1 (the default)', { field: 'version' });
  }
  const body = rendered.get(version) ?? render();
  rendered.set(version, body);
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body };
});
