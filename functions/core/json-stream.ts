import { InvalidInputError, PayloadTooLargeError } from './errors.js';

/**
 * Splits a body holding one JSON value or several concatenated ones (REST Proxy's streaming
 * produce: `{...}{...}` or newline-separated) and parses each. Throws a 400 naming the byte
 * offset of the first value that is not valid JSON, and a 413 as soon as a value past
 * `maxValues` begins (before parsing the rest of a body that will be refused anyway).
 */
export function parseJsonSequence(body: string, maxValues = Number.POSITIVE_INFINITY): unknown[] {
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
    const c = body[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === ' ' || c === '\n' || c === '\r' || c === '\t') {
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
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth < 0) {
        throw new InvalidInputError(`body: unexpected "${c}" at offset ${i}`, { field: 'body' });
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
