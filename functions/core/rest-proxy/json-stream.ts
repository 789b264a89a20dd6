import { InvalidInputError, PayloadTooLargeError } from '../shared/errors.js';

// Character codes: the scan compares numbers, not one-character strings.
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SPACE = 0x20;
const NEWLINE = 0x0a;
const RETURN = 0x0d;
const TAB = 0x09;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * Splits a body holding one JSON value or several concatenated ones (REST Proxy's streaming
 * produce: `{...}{...}` or newline-separated) and parses each. Throws a 400 naming the byte
 * offset of the first value that is not valid JSON, and a 413 as soon as a value past
 * `maxValues` begins (before parsing the rest of a body that will be refused anyway).
 */
export function parseJsonSequence(body: string, maxValues = Number.POSITIVE_INFINITY): unknown[] {
  // Most bodies are one value (a batch, a v2 body, one record): V8's parser alone takes it,
  // without the scan below walking every character first. A body that is not one valid value
  // (several, or invalid) is scanned, so that it is split or refused exactly as before.
  if (maxValues >= 1) {
    try {
      return [JSON.parse(body)];
    } catch {
      // scanned below
    }
  }
  const values: unknown[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let start = -1;
  const flush = (end: number) => {
    const text = body.slice(start, end);
    try {
      values.push(JSON.parse(text));
    } catch (error) {
      throw new InvalidInputError(
        `body: value ${values.length + 1} (at offset ${start}) is not valid JSON: ${(error as Error).message}`,
        { field: 'body', cause: error },
      );
    }
    start = -1;
  };
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === SPACE || c === NEWLINE || c === RETURN || c === TAB) {
      if (start >= 0 && depth === 0) flush(i);
      continue;
    }
    if (start < 0) {
      if (values.length >= maxValues) {
        throw new PayloadTooLargeError(
          `body: more than ${maxValues} records; at most ${maxValues} are accepted per request`,
          { field: 'body' },
        );
      }
      start = i;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth < 0) {
        throw new InvalidInputError(`body: unexpected "${body[i]}" at offset ${i}`, {
          field: 'body',
        });
      }
      if (depth === 0) flush(i + 1);
    }
  }
  if (inString || depth > 0) {
    throw new InvalidInputError(
      `body: value ${values.length + 1} (at offset ${start}) is not complete JSON`,
      { field: 'body' },
    );
  }
  if (start >= 0) flush(body.length);
  return values;
}
