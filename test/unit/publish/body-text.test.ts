import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { PayloadTooLargeError } from '../../../functions/core/shared/errors.js';
import { bodyText } from '../../../functions/publish/body-text.js';
import { httpEvent } from '../../helpers/http-event.js';

// A text body is parsed as it came (no copy to bytes and back): its size is still its UTF-8
// bytes, and a body with a lone surrogate still reads as the copy read it (U+FFFD).

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    return (error as Error).message;
  }
  throw new Error('not refused');
}

describe('bodyText', () => {
  const body = '{"value":"é✓😀"}';
  const bytes = Buffer.byteLength(body);

  it('takes a body of exactly the limit in UTF-8 bytes and refuses one byte more', () => {
    expect(bytes).toBeGreaterThan(body.length);
    expect(bodyText(httpEvent({ body }), bytes)).toBe(body);
    expect(refusal(() => bodyText(httpEvent({ body }), bytes - 1))).toBe(
      `body: ${bytes} bytes; at most ${bytes - 1} are accepted per request`,
    );
  });

  it('reads a base64-encoded body from its bytes', () => {
    const event = { ...httpEvent(), body: Buffer.from(body).toString('base64') };
    const encoded = { ...event, isBase64Encoded: true };
    expect(bodyText(encoded, bytes)).toBe(body);
    expect(() => bodyText(encoded, bytes - 1)).toThrow(PayloadTooLargeError);
  });

  it('reads a lone surrogate as U+FFFD, measured as its three bytes', () => {
    const lone = '{"value":"a\ud800"}';
    expect(bodyText(httpEvent({ body: lone }), 100)).toBe('{"value":"a\ufffd"}');
    expect(refusal(() => bodyText(httpEvent({ body: lone }), 10))).toContain(
      `body: ${Buffer.byteLength(lone)} bytes`,
    );
  });
});
