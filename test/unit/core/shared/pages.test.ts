import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../../functions/core/shared/errors.js';
import { decodeCursor, encodeCursor, pageOf } from '../../../../functions/core/shared/pages.js';

const letters = ['a', 'b', 'c', 'd', 'e'];
const byLetter = (after: unknown, limit: number) =>
  pageOf(
    letters,
    { after, limit },
    (item) => item,
    (item, _, key: string) => item > key,
  );

describe('pages', () => {
  it('walks a list page by page, the last without next', () => {
    const first = byLetter(undefined, 2);
    expect(first).toEqual({ items: ['a', 'b'], next: encodeCursor('b') });
    const second = byLetter(decodeCursor(first.next ?? ''), 2);
    expect(second).toEqual({ items: ['c', 'd'], next: encodeCursor('d') });
    expect(byLetter(decodeCursor(second.next ?? ''), 2)).toEqual({ items: ['e'] });
    expect(byLetter(undefined, 5)).toEqual({ items: letters });
  });

  it('resumes after a key whose item is gone, and answers an empty last page past the end', () => {
    expect(byLetter('bb', 2).items).toEqual(['c', 'd']);
    expect(byLetter('z', 2)).toEqual({ items: [] });
  });

  it('refuses a cursor it did not give, naming the field', () => {
    for (const bad of ['not base64!', Buffer.from('{').toString('base64url'), 'x'.repeat(5000)]) {
      expect(() => decodeCursor(bad)).toThrow(InvalidInputError);
      expect(() => decodeCursor(bad)).toThrow(/cursor: not a cursor this API gave/);
    }
  });
});
