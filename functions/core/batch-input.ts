import { InvalidInputError, type TallyError, UnprocessableInputError } from './errors.js';
import {
  isPlainObject,
  parseRecordOrError,
  type RecordInput,
  rejectUnknownFields,
} from './record-input.js';

// REST Proxy v3 batch produce: `{entries: [{id, ...record}]}`. A problem with the list itself
// (ids, count) refuses the whole request with 422 and nothing is produced; a problem inside one
// entry's record is that entry's failure.

const ENTRY_ID = /^[0-9a-zA-Z_-]{1,80}$/;

export interface BatchEntries {
  readonly ids: readonly string[];
  readonly records: ReadonlyArray<RecordInput | TallyError>;
}

function refuse(field: string, message: string): never {
  throw new UnprocessableInputError(`${field}: ${message}`, { field });
}

export function parseBatch(body: unknown, maxEntries: number): BatchEntries {
  if (!isPlainObject(body))
    throw new InvalidInputError('body: must be an object {entries: [...]}', { field: 'body' });
  rejectUnknownFields(body, new Set(['entries']), '');
  const { entries } = body;
  if (!Array.isArray(entries) || entries.length === 0)
    refuse('entries', 'must be a non-empty list');
  if (entries.length > maxEntries) {
    refuse('entries', `has ${entries.length} entries; at most ${maxEntries} are accepted`);
  }
  const ids: string[] = [];
  const seen = new Set<string>();
  const records = entries.map((entry: unknown, i) => {
    if (!isPlainObject(entry)) refuse(`entries[${i}]`, 'must be an object');
    const { id } = entry;
    if (typeof id !== 'string' || !ENTRY_ID.test(id)) {
      refuse(`entries[${i}].id`, 'must be a string of 1-80 characters from [0-9a-zA-Z_-]');
    }
    if (seen.has(id))
      refuse(`entries[${i}].id`, `"${id}" is used by another entry; ids must be distinct`);
    seen.add(id);
    ids.push(id);
    return parseRecordOrError(entry, `entries[${i}].`, 'id');
  });
  return { ids, records };
}
