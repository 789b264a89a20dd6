import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../../functions/core/shared/errors.js';
import {
  isPlainObject,
  rejectUnknownFields,
  taskInputObject,
} from '../../../../functions/core/shared/input-checks.js';

const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    const e = error as InvalidInputError;
    return { message: e.message, field: e.field };
  }
  throw new Error('not refused');
};

describe('isPlainObject', () => {
  it('is true for objects only, not arrays or null', () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject({ a: 1 })).toBe(true);
    for (const value of [null, undefined, [], 'x', 1, true])
      expect(isPlainObject(value)).toBe(false);
  });
});

describe('rejectUnknownFields', () => {
  const allowed = new Set(['key', 'value']);

  it('accepts an object of allowed fields only, and skips an ignored one', () => {
    expect(() => rejectUnknownFields({ key: 1, value: 2 }, allowed, '')).not.toThrow();
    expect(() => rejectUnknownFields({ id: 'a', key: 1 }, allowed, '', 'id')).not.toThrow();
  });

  it('names the first unknown field with where it is, and lists what is allowed', () => {
    expect(
      refusal(() => rejectUnknownFields({ key: 1, vaule: 2 }, allowed, 'records[3].')),
    ).toEqual({
      message: 'records[3].vaule: unknown field (allowed: key, value)',
      field: 'records[3].vaule',
    });
  });

  it('quotes a name that is not a plain identifier', () => {
    expect(refusal(() => rejectUnknownFields({ 'a b': 1 }, allowed, '')).field).toBe('"a b"');
  });

  it('ignores inherited names', () => {
    const inherited = Object.create({ extra: 1 }) as Record<string, unknown>;
    inherited.key = 1;
    expect(() => rejectUnknownFields(inherited, allowed, '')).not.toThrow();
  });
});

describe('taskInputObject', () => {
  it("is a task's input when it is an object of only the given fields", () => {
    const input = { group: 'g', topic: 't' };
    expect(taskInputObject(input, ['group', 'topic'])).toBe(input);
  });

  it('refuses anything else, naming the input and its fields', () => {
    expect(refusal(() => taskInputObject([], ['group']))).toEqual({
      message: 'input: must be {group}',
      field: 'input',
    });
    expect(refusal(() => taskInputObject({ group: 'g', other: 1 }, ['group'])).field).toBe('other');
  });
});
