import { InvalidInputError } from './errors.js';

// Checks every input at the edge shares: a plain object, of only the fields allowed.

function invalid(field: string, message: string): never {
  throw new InvalidInputError(`${field}: ${message}`, { field });
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A task's input: a plain object of only `fields` (each field is then checked by the caller). */
export function taskInputObject(
  input: unknown,
  fields: readonly string[],
): Record<string, unknown> {
  if (!isPlainObject(input))
    throw new InvalidInputError(`input: must be {${fields.join(', ')}}`, { field: 'input' });
  rejectUnknownFields(input, new Set(fields), '');
  return input;
}

export function rejectUnknownFields(
  object: Record<string, unknown>,
  allowed: ReadonlySet<string>,
  where: string,
  /** A field the caller has read itself (a batch entry's `id`): not reported, not listed. */
  ignored?: string,
): void {
  // for-in, not Object.keys: no list of names per object (a batch reads thousands); an
  // inherited name is skipped as Object.keys skips it.
  for (const name in object) {
    if (!allowed.has(name) && name !== ignored && Object.hasOwn(object, name)) {
      // A name that is not a plain identifier is quoted, so the message still starts with it.
      invalid(
        `${where}${/^[\w-]+$/.test(name) ? name : JSON.stringify(name)}`,
        `unknown field (allowed: ${[...allowed].join(', ')})`,
      );
    }
  }
}
