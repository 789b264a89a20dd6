import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonSequence } from '../../../../functions/core/rest-proxy/json-stream.js';
import {
  InvalidInputError,
  PayloadTooLargeError,
} from '../../../../functions/core/shared/errors.js';
import { PROPERTY_SEED } from '../../../helpers/property-seed.js';

function bodyError(body: string): InvalidInputError {
  let thrown: unknown;
  try {
    parseJsonSequence(body);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(InvalidInputError);
  const error = thrown as InvalidInputError;
  expect(error.field).toBe('body');
  expect(error.status).toBe(400);
  return error;
}

describe('parseJsonSequence', () => {
  it('parses one object', () => {
    expect(parseJsonSequence('{"a":1}')).toEqual([{ a: 1 }]);
  });

  it('parses one object with surrounding and inner whitespace', () => {
    expect(parseJsonSequence('\n  { "a" : [ 1 , 2 ] ,\n "b": {"c": null} }\r\n\t')).toEqual([
      { a: [1, 2], b: { c: null } },
    ]);
  });

  it('parses concatenated objects without separators', () => {
    expect(parseJsonSequence('{"a":1}{"b":2}{"c":3}')).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
  });

  it('parses objects separated by newlines, spaces, tabs and CRLF', () => {
    expect(parseJsonSequence('{"a":1}\n{"b":2}\r\n{"c":3} \t {"d":4}\n')).toEqual([
      { a: 1 },
      { b: 2 },
      { c: 3 },
      { d: 4 },
    ]);
  });

  it('parses nested objects and arrays as one value each', () => {
    expect(parseJsonSequence('{"a":{"b":{"c":[{"d":1}]}}}[1,[2]]')).toEqual([
      { a: { b: { c: [{ d: 1 }] } } },
      [1, [2]],
    ]);
  });

  it('does not count braces inside strings', () => {
    expect(parseJsonSequence('{"a":"}{"}{"b":"{{[["}')).toEqual([{ a: '}{' }, { b: '{{[[' }]);
  });

  it('handles escaped quotes and backslashes inside strings', () => {
    expect(parseJsonSequence('{"a":"say \\"}\\" ok"}{"b":"\\\\"}{"c":"\\\\\\"}"}')).toEqual([
      { a: 'say "}" ok' },
      { b: '\\' },
      { c: '\\"}' },
    ]);
  });

  it('parses whitespace-separated top-level scalars', () => {
    expect(parseJsonSequence('1 "two" true null')).toEqual([1, 'two', true, null]);
  });

  it('returns [] for an empty or blank body', () => {
    expect(parseJsonSequence('')).toEqual([]);
    expect(parseJsonSequence(' \n\r\t ')).toEqual([]);
  });

  it('names the value number and offset of invalid JSON', () => {
    const error = bodyError('{"a":1}\n{"b":}');
    expect(error.message).toContain('value 2');
    expect(error.message).toContain('offset 8');
    expect(error.message).toContain('not valid JSON');
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('rejects invalid JSON in the first value', () => {
    const error = bodyError("{'a':1}");
    expect(error.message).toContain('value 1 (at offset 0)');
  });

  it('rejects garbage after a valid value', () => {
    const error = bodyError('{"a":1} nope');
    expect(error.message).toContain('value 2 (at offset 8)');
  });

  it('rejects an unterminated object', () => {
    const error = bodyError('{"a":1}{"b":2');
    expect(error.message).toContain('value 2 (at offset 7)');
    expect(error.message).toContain('not complete JSON');
  });

  it('rejects an unterminated string', () => {
    expect(bodyError('{"a":"x}').message).toContain('not complete JSON');
  });

  it('rejects a stray closing brace, naming its offset', () => {
    const error = bodyError('{"a":1}}');
    expect(error.message).toContain('"}"');
    expect(error.message).toContain('offset 7');
    expect(bodyError('}').message).toContain('offset 0');
    expect(bodyError(']').message).toContain('"]"');
  });

  it('takes up to maxValues values, and refuses the next with 413 as soon as it begins', () => {
    expect(parseJsonSequence('{"a":1}\n{"a":2}', 2)).toEqual([{ a: 1 }, { a: 2 }]);
    expect(parseJsonSequence('{"a":1} ', 1)).toEqual([{ a: 1 }]);
    let thrown: unknown;
    try {
      // The third value is not even valid JSON: the count is refused before it is read.
      parseJsonSequence('{"a":1}{"a":2}{"a":', 2);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PayloadTooLargeError);
    expect((thrown as PayloadTooLargeError).status).toBe(413);
    expect((thrown as PayloadTooLargeError).field).toBe('body');
    expect((thrown as PayloadTooLargeError).message).toContain('at most 2');
  });

  it('reads a body of one value as the scan reads the same value among others', () => {
    // One value is handed to JSON.parse whole; two are split by the scan first.
    const whitespace = fc.stringMatching(/^[ \t\r\n]{0,3}$/);
    fc.assert(
      fc.property(fc.jsonValue(), whitespace, whitespace, (value, before, after) => {
        const text = `${before}${JSON.stringify(value, null, before.length)}${after}`;
        const [alone] = parseJsonSequence(text);
        expect(alone).toEqual(JSON.parse(text));
        expect(parseJsonSequence(`${text} ${text}`)).toEqual([alone, alone]);
      }),
      { seed: PROPERTY_SEED },
    );
  });

  it('refuses even one value when none are accepted', () => {
    expect(() => parseJsonSequence('{"a":1}', 0)).toThrow(PayloadTooLargeError);
  });
});
