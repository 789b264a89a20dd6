import type { BodyDecoder } from '../core/rest-proxy/content-type.js';
import { PayloadTooLargeError } from '../core/shared/errors.js';
import { bodyBytes, type HttpBody } from '../platform/http-event.js';

/**
 * A publish request's body as text, within `maxRequestBytes` (its UTF-8 bytes). A text body is
 * read as it came and measured without encoding it: a copy to bytes and back would change
 * nothing but lone surrogates (to U+FFFD), so only a body with one is copied. `decode` reads the
 * bytes of a body in another charset than UTF-8 (Content-Type's charset); a body API Gateway
 * gave as text was decoded already, so only a base64 one is.
 */
export function bodyText(event: HttpBody, maxRequestBytes: number, decode?: BodyDecoder): string {
  const text = event.body;
  if (decode !== undefined && event.isBase64Encoded) {
    const bytes = bodyBytes(event);
    refuseOver(bytes.length, maxRequestBytes);
    return decode(bytes);
  }
  const plain = typeof text === 'string' && !event.isBase64Encoded && isWellFormed(text);
  const bytes = plain ? undefined : bodyBytes(event);
  const size = bytes === undefined ? Buffer.byteLength(text ?? '', 'utf8') : bytes.length;
  refuseOver(size, maxRequestBytes);
  return bytes === undefined ? (text ?? '') : bytes.toString('utf8');
}

function refuseOver(size: number, maxRequestBytes: number): void {
  if (size > maxRequestBytes) {
    throw new PayloadTooLargeError(
      `body: ${size} bytes; at most ${maxRequestBytes} are accepted per request`,
      { field: 'body' },
    );
  }
}

/** No lone surrogates: ES2024's String.prototype.isWellFormed (Node 20 and 22 have it). */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}
