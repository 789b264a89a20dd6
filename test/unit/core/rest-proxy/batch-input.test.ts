import { describe, expect, it } from 'vitest';
import type { RecordInput } from '../../../../functions/core/publish/record.js';
import { parseBatch } from '../../../../functions/core/rest-proxy/batch-input.js';
import {
  InvalidInputError,
  UnprocessableInputError,
} from '../../../../functions/core/shared/errors.js';

const value = (data: string) => ({ value: { type: 'STRING', data } });

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

function refused(body: unknown, field: string, maxEntries = 10): UnprocessableInputError {
  const error = thrownBy(() => parseBatch(body, maxEntries));
  expect(error).toBeInstanceOf(UnprocessableInputError);
  const refusal = error as UnprocessableInputError;
  expect(refusal.status).toBe(422);
  // REST Proxy's Errors.produceBatchException: 42208 (ProduceBatchActionTest.java asserts it for
  // an empty batch, too many entries, ids not distinct, and an id that is not a valid string).
  expect(refusal.errorCode).toBe(42208);
  expect(refusal.field).toBe(field);
  expect(refusal.message.startsWith(`${field}: `)).toBe(true);
  return refusal;
}

describe('parseBatch', () => {
  it('returns ids and parsed records in order', () => {
    const batch = parseBatch(
      {
        entries: [
          { id: 'a', ...value('one') },
          { id: 'B_2-x', partition_id: 1, ...value('two') },
        ],
      },
      10,
    );
    expect(batch.ids).toEqual(['a', 'B_2-x']);
    expect(batch.records).toHaveLength(2);
    const [first, second] = batch.records as RecordInput[];
    expect(first?.value?.bytes?.toString()).toBe('one');
    expect(second?.value?.bytes?.toString()).toBe('two');
    expect(second?.partition).toBe(1);
  });

  it('accepts ids of 1 and 80 characters from [0-9a-zA-Z_-]', () => {
    const long = 'a'.repeat(80);
    const batch = parseBatch({ entries: [{ id: '0' }, { id: long }, { id: 'Z_-9' }] }, 10);
    expect(batch.ids).toEqual(['0', long, 'Z_-9']);
  });

  it('rejects an 81-character id', () => {
    refused({ entries: [{ id: 'a' }, { id: 'a'.repeat(81) }] }, 'entries[1].id');
  });

  it.each(['', 'a.b', 'a b', 'é', 'a/b', 'a:b'])('rejects the id %j', (id) => {
    refused({ entries: [{ id }] }, 'entries[0].id');
  });

  it('rejects a missing or non-string id', () => {
    refused({ entries: [value('x')] }, 'entries[0].id');
    refused({ entries: [{ id: 1 }] }, 'entries[0].id');
    refused({ entries: [{ id: null }] }, 'entries[0].id');
  });

  it('rejects duplicate ids, naming the second entry', () => {
    const error = refused({ entries: [{ id: 'a' }, { id: 'b' }, { id: 'a' }] }, 'entries[2].id');
    expect(error.message).toContain('"a"');
    expect(error.message).toContain('distinct');
  });

  it('rejects an empty batch, or no body at all, with 42208', () => {
    refused({ entries: [] }, 'entries');
    refused(null, 'body');
  });

  it('rejects a body without entries as REST Proxy does: 422, 42208 "Empty batch."', () => {
    for (const body of [{}, { entries: null }]) {
      const error = refused(body, 'entries');
      expect(error.message).toBe('entries: Empty batch. A batch is {entries: [{id, ...record}]}');
    }
  });

  /** A body REST Proxy cannot map to its batch request: 422 with error_code 422. */
  function unmappable(body: unknown, field: string): UnprocessableInputError {
    const error = thrownBy(() => parseBatch(body, 10));
    expect(error).toBeInstanceOf(UnprocessableInputError);
    const refusal = error as UnprocessableInputError;
    expect(refusal.status).toBe(422);
    expect(refusal.errorCode).toBe(422);
    expect(refusal.field).toBe(field);
    expect(refusal.message.startsWith(`${field}: `)).toBe(true);
    return refusal;
  }

  it('rejects a non-list entries field with 422 (a body REST Proxy cannot map)', () => {
    unmappable({ entries: { id: 'a' } }, 'entries');
  });
  it('accepts exactly maxEntries and rejects one more', () => {
    const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `e${i}` }));
    expect(parseBatch({ entries: entries(3) }, 3).ids).toHaveLength(3);
    const error = refused({ entries: entries(4) }, 'entries', 3);
    expect(error.message).toContain('4');
    expect(error.message).toContain('3');
  });

  it('rejects an entry that is not an object with 422', () => {
    unmappable({ entries: [{ id: 'a' }, 'b'] }, 'entries[1]');
  });

  it('rejects a body that is not an object with 422', () => {
    unmappable([{ id: 'a' }], 'body');
  });

  it('rejects unknown top-level fields with 422, naming them and the one allowed', () => {
    const error = unmappable({ entries: [{ id: 'a' }], records: [] }, 'records');
    expect(error.message).toContain('entries');
  });

  it("makes a bad record that entry's InvalidInputError while the others parse", () => {
    const batch = parseBatch(
      {
        entries: [
          { id: 'a', ...value('ok') },
          { id: 'b', value: { type: 'BINARY', data: '!!' } },
          { id: 'c', value: { type: 'JSON' } },
          { id: 'd', bogus: true },
          { id: 'h', ...value('x'), headers: [{ name: 'h', value: 'AA' }] },
          { id: 'e', ...value('also ok') },
        ],
      },
      10,
    );
    expect(batch.ids).toEqual(['a', 'b', 'c', 'd', 'h', 'e']);
    const [a, b, c, d, h, e] = batch.records;
    expect(a).not.toBeInstanceOf(InvalidInputError);
    expect((a as RecordInput).value?.bytes?.toString()).toBe('ok');
    expect(b).toBeInstanceOf(InvalidInputError);
    expect((b as InvalidInputError).field).toBe('entries[1].value.data');
    expect(c).toBeInstanceOf(InvalidInputError);
    expect((c as InvalidInputError).field).toBe('entries[2].value.data');
    expect((c as InvalidInputError).message).toContain('entries[2].value.data');
    expect(d).toBeInstanceOf(InvalidInputError);
    expect((d as InvalidInputError).field).toBe('entries[3].bogus');
    // A header value without its base64 padding: that entry's 400, as REST Proxy answers it.
    expect(h).toBeInstanceOf(InvalidInputError);
    expect((h as InvalidInputError).field).toBe('entries[4].headers[0].value');
    expect(e).not.toBeInstanceOf(InvalidInputError);
    expect((e as RecordInput).value?.bytes?.toString()).toBe('also ok');
  });

  it('does not treat the id as a record field', () => {
    const [record] = parseBatch({ entries: [{ id: 'a', ...value('v') }] }, 10).records;
    expect(record).not.toBeInstanceOf(InvalidInputError);
  });
});
