// GET /openapi.json — Tally's OpenAPI 3.1 document (platform/openapi.ts). Behind the `read` scope
// like every other route (README, Access): any token of ours may fetch it, and the admin surface
// it describes is not published to anonymous callers.

import { httpHandler } from '../platform/http.js';
import { openApiDocument } from '../platform/openapi.js';

const body = JSON.stringify(openApiDocument);

export const handler = httpHandler('read', async () => ({
  statusCode: 200,
  headers: { 'content-type': 'application/json' },
  body,
}));
