import { InvalidInputError, type TallyError, UnprocessableInputError } from '../shared/errors.js';
import { isPlainObject, rejectUnknownFields } from '../shared/input-checks.js';
import { parsedRecordOrError } from './record-input.js';
import type { ParsedRecord } from './schema-input.js';

// REST Proxy v3 batch produce: `{entries: [{id, ...record}]}`. A problem with the list itself
// (empty, too long, ids not distinct, an id that is not one) refuses the whole request with 422
// and error_code 42208, as REST Proxy's Errors.produceBatchException does (ProduceBatchAction.java,
// ProduceBatchActionTest.java), and nothing is produced; a problem inside one entry's record is
// that entry's failure.

/** REST Proxy's entry ids (ProduceBatchRequestEntry: `[0-9a-zA-Z_-]{1,80}`). */
export const ENTRY_ID = /^[0-9a-zA-Z_-]{1,80}$/;

export interface BatchEntries {
  readonly ids: readonly string[];
  /** Keys and values with a schema are pending (schema-input.ts) when parsed with `schemas`. */
  readonly records: ReadonlyArray<ParsedRecord | TallyError>;
}

/** REST Proxy's code for a batch that cannot be produced as a whole. */
export const BATCH_ERROR_CODE = 42208;

export function refuseBatch(field: string, message: string): never {
  throw new UnprocessableInputError(`${field}: ${message}`, {
    field,
    errorCode: BATCH_ERROR_CODE,
  });
}

/**
 * A body REST Proxy cannot map to its batch request (Jackson's mapping errors: not an object, an
 * unknown field, entries not a list): 422 with error_code 422, nothing produced.
 */
function unmappable(field: string, message: string): never {
  throw new UnprocessableInputError(`${field}: ${message}`, { field });
}

const BATCH_FIELDS = new Set(['entries']);

export function parseBatch(body: unknown, maxEntries: number, schemas = false): BatchEntries {
  if (body === null) refuseBatch('body', 'the request body is empty; {entries: [...]} is required');
  if (!isPlainObject(body)) unmappable('body', 'must be an object {entries: [...]}');
  try {
    rejectUnknownFields(body, BATCH_FIELDS, '');
  } catch (error) {
    if (!(error instanceof InvalidInputError) || error.field === undefined) throw error;
    unmappable(error.field, `unknown field; a batch is {entries: [{id, ...record}]}`);
  }
  const { entries } = body;
  // REST Proxy reads a missing entries list as an empty one: 42208 "Empty batch."
  if (entries === undefined || entries === null)
    refuseBatch('entries', 'Empty batch. A batch is {entries: [{id, ...record}]}');
  if (!Array.isArray(entries)) unmappable('entries', 'must be a list of {id, ...record}');
  if (entries.length === 0) refuseBatch('entries', 'must be a non-empty list (empty batch)');
  if (entries.length > maxEntries) {
    refuseBatch('entries', `has ${entries.length} entries; at most ${maxEntries} are accepted`);
  }
  const ids: string[] = [];
  const seen = new Set<string>();
  const records = entries.map((entry: unknown, i) => {
    if (!isPlainObject(entry)) unmappable(`entries[${i}]`, 'must be an object {id, ...record}');
    const { id } = entry;
    if (typeof id !== 'string' || !ENTRY_ID.test(id)) {
      refuseBatch(`entries[${i}].id`, 'must be a string of 1-80 characters from [0-9a-zA-Z_-]');
    }
    if (seen.has(id))
      refuseBatch(`entries[${i}].id`, `"${id}" is used by another entry; ids must be distinct`);
    seen.add(id);
    ids.push(id);
    return parsedRecordOrError(entry, `entries[${i}].`, 'id', schemas);
  });
  return { ids, records };
}
