import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import {
  charsetDecoder,
  parseContentType,
  requireMediaType,
} from '../../../../functions/core/rest-proxy/content-type.js';
import {
  InvalidInputError,
  UnsupportedMediaTypeError,
} from '../../../../functions/core/shared/errors.js';

const JSON_ONLY = ['application/json'];

describe('parseContentType', () => {
  it('reads the media type and the charset, whatever their case and spacing', () => {
    expect(parseContentType('Application/JSON ; Charset="ISO-8859-1"')).toEqual({
      mediaType: 'application/json',
      charset: 'ISO-8859-1',
    });
    expect(parseContentType('application/json')).toEqual({
      mediaType: 'application/json',
      charset: undefined,
    });
  });
});

describe('requireMediaType', () => {
  it('accepts application/json with any parameters', () => {
    expect(requireMediaType('application/json; charset=UTF-8', JSON_ONLY).charset).toBe('UTF-8');
  });

  it('reads a request without Content-Type as JSON', () => {
    expect(requireMediaType(undefined, JSON_ONLY).mediaType).toBe('application/json');
  });

  // kafka-rest ProduceAction.java: @Consumes(MediaType.APPLICATION_JSON), so Jersey answers 415.
  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', ''])(
    'refuses %j with 415 naming Content-Type',
    (contentType) => {
      let thrown: unknown;
      try {
        requireMediaType(contentType, JSON_ONLY);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(UnsupportedMediaTypeError);
      expect((thrown as UnsupportedMediaTypeError).status).toBe(415);
      expect((thrown as UnsupportedMediaTypeError).field).toBe('Content-Type');
    },
  );
});

describe('charsetDecoder', () => {
  it('leaves UTF-8 (or no charset) to the ordinary reading', () => {
    expect(charsetDecoder(undefined)).toBeUndefined();
    expect(charsetDecoder('UTF-8')).toBeUndefined();
    expect(charsetDecoder('utf8')).toBeUndefined();
  });

  // ProduceActionNoSchemaIntegrationTest.produceStringCharsetIso88591: 200, read as Java's
  // ISO-8859-1, whose bytes 0x80-0x9f are U+0080-U+009F (WHATWG would read windows-1252).
  it('reads ISO-8859-1 bytes as Java does, C1 controls included', () => {
    const decode = charsetDecoder('ISO-8859-1');
    expect(decode?.(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x80]))).toBe('caf\u00e9\u0080');
  });

  it('reads another charset Node knows', () => {
    expect(charsetDecoder('UTF-16LE')?.(Buffer.from('hé', 'utf16le'))).toBe('hé');
  });

  // ProduceActionNoSchemaIntegrationTest.produceStringCharsetInvalid: charset=DEADBEEF → 400.
  it('refuses a charset that is not known with 400 naming Content-Type', () => {
    let thrown: unknown;
    try {
      charsetDecoder('DEADBEEF');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidInputError);
    expect((thrown as InvalidInputError).field).toBe('Content-Type');
    expect((thrown as InvalidInputError).message).toContain('DEADBEEF');
  });
});
