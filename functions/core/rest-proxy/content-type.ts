import { TextDecoder } from 'node:util';
import { InvalidInputError, UnsupportedMediaTypeError } from '../shared/errors.js';

// A request's Content-Type as REST Proxy judges it: its produce resources are
// @Consumes(application/json), so Jersey answers 415 to any other media type before reading the
// body, and a charset Java does not know makes the body unreadable: 400
// (kafka-rest ProduceActionNoSchemaIntegrationTest: produceStringCharsetIso88591 → 200,
// produceStringCharsetInvalid → 400).

export interface ContentType {
  /** The media type, lower case, without parameters (`application/json`). */
  readonly mediaType: string;
  /** The charset parameter as given, if there was one. */
  readonly charset: string | undefined;
}

/** The media type and charset of a Content-Type header (absent: JSON, see `requireMediaType`). */
export function parseContentType(header: string): ContentType {
  const [type = '', ...parameters] = header.split(';');
  let charset: string | undefined;
  for (const parameter of parameters) {
    const at = parameter.indexOf('=');
    if (at < 0 || parameter.slice(0, at).trim().toLowerCase() !== 'charset') continue;
    charset = parameter
      .slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
  }
  return { mediaType: type.trim().toLowerCase(), charset };
}

/**
 * The Content-Type of a request that must be one of `accepted`: 415 otherwise. A request without
 * one is read as the first of them (what Jersey does with a body that names no type).
 */
export function requireMediaType(
  header: string | undefined,
  accepted: readonly string[],
): ContentType {
  const first = accepted[0] ?? 'application/json';
  if (header === undefined) return { mediaType: first, charset: undefined };
  const contentType = parseContentType(header);
  if (!accepted.includes(contentType.mediaType)) {
    throw new UnsupportedMediaTypeError(
      `Content-Type: ${contentType.mediaType || '(empty)'} is not supported; use ${accepted.join(' or ')}`,
      { field: 'Content-Type' },
    );
  }
  return contentType;
}

/** Java's names for ISO-8859-1 (WHATWG's decoders read that label as windows-1252 instead). */
const LATIN1 = new Set([
  'iso-8859-1',
  'iso8859-1',
  'iso_8859-1',
  'iso8859_1',
  'iso_8859_1',
  '8859_1',
  'iso-ir-100',
  'iso_8859-1:1987',
  'latin1',
  'l1',
  'cp819',
  'ibm819',
  'ibm-819',
  'csisolatin1',
]);
const UTF8 = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8']);
const ASCII = new Set(['us-ascii', 'ascii', 'iso646-us', 'us', 'ascii7']);

export type BodyDecoder = (bytes: Uint8Array) => string;

/**
 * How to read a body in `charset`: undefined for UTF-8 (the default, read as it came), a decoder
 * for another charset, or a 400 naming Content-Type for one that is not known.
 */
export function charsetDecoder(charset: string | undefined): BodyDecoder | undefined {
  if (charset === undefined) return undefined;
  const name = charset.trim().toLowerCase();
  if (UTF8.has(name)) return undefined;
  // ASCII is a subset of ISO-8859-1: its bytes read the same.
  if (LATIN1.has(name) || ASCII.has(name)) {
    return (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(name);
  } catch {
    throw new InvalidInputError(`Content-Type: charset ${charset} is not supported`, {
      field: 'Content-Type',
    });
  }
  return (bytes) => decoder.decode(bytes);
}
