import { Buffer } from 'node:buffer';
import type { RecordData, RecordInput } from '../publish/record.js';
import { type BatchEntries, ENTRY_ID } from './batch-input.js';
import { decodeBase64, NO_HEADERS } from './record-input.js';

// A v3 batch body in its most common form, read straight from its text (issue 32: JSON.parse and
// the objects it builds were a quarter of Tally's own CPU per 1,000-record batch): compact JSON
// `{"entries":[{"id":"…","key":{"type":"STRING","data":"…"},"value":{…}},…]}`, each entry's
// fields in that order, key and value each optional, of type STRING or BINARY with string or
// null data. A body of any other form, or one with a problem (an id that is not one, the same
// id twice, more entries than allowed, a BINARY that is not base64), is not read here:
// `parsePlainBatch` answers undefined and the caller parses it as JSON (batch-input.ts), which
// refuses or reads it as before. What it answers is what parseBatch(JSON.parse(text)) answers,
// field for field and byte for byte (a unit test holds them equal on varied bodies).

/**
 * Where JSON strings are not their characters between quotes, or characters not their bytes:
 * an escape, a control character (JSON.parse refuses them raw), anything past ASCII.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const NOT_PLAIN = /[\u0000-\u001f\\\u007f-\uffff]/;

const QUOTE = 0x22;
const COMMA = 0x2c;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

const OPENING = '{"entries":[';
const ENTRY = '{"id":"';
const KEY = ',"key":{"type":"';
const VALUE = ',"value":{"type":"';
const STRING_DATA = 'STRING","data":';
const BINARY_DATA = 'BINARY","data":';

/** The batch's ids and records, read from its text; undefined for a body of another form. */
export function parsePlainBatch(text: string, maxEntries: number): BatchEntries | undefined {
  if (!text.startsWith(OPENING) || NOT_PLAIN.test(text)) return undefined;
  // ASCII only: the text's characters are its UTF-8 bytes, and a STRING's bytes are a view of
  // them (a key or value is only read; the copy is one per request, not two per record).
  const bytes = Buffer.from(text, 'latin1');
  const ids: string[] = [];
  const seen = new Set<string>();
  const records: RecordInput[] = [];
  let at = OPENING.length;
  for (;;) {
    if (records.length >= maxEntries || !text.startsWith(ENTRY, at)) return undefined;
    const idEnd = text.indexOf('"', at + ENTRY.length);
    if (idEnd < 0) return undefined;
    const id = text.slice(at + ENTRY.length, idEnd);
    if (!ENTRY_ID.test(id) || seen.has(id)) return undefined;
    at = idEnd + 1;
    let key: RecordData | undefined;
    let value: RecordData | undefined;
    if (text.startsWith(KEY, at)) {
      at += KEY.length;
      key = readData(text, bytes, at);
      if (key === undefined) return undefined;
      at = dataEnd;
    }
    if (text.startsWith(VALUE, at)) {
      at += VALUE.length;
      value = readData(text, bytes, at);
      if (value === undefined) return undefined;
      at = dataEnd;
    }
    if (text.charCodeAt(at) !== CLOSE_BRACE) return undefined;
    at++;
    seen.add(id);
    ids.push(id);
    // parseRecordParts's record, its fields in its order.
    records.push({ partition: undefined, key, value, headers: NO_HEADERS, timestamp: undefined });
    const next = text.charCodeAt(at);
    if (next === COMMA) {
      at++;
      continue;
    }
    if (
      next === CLOSE_BRACKET &&
      text.charCodeAt(at + 1) === CLOSE_BRACE &&
      at + 2 === text.length
    ) {
      return { ids, records };
    }
    return undefined;
  }
}

/** Where the last key or value `readData` read ends (past its `}`). */
let dataEnd = 0;

/**
 * The `STRING","data":…}` or `BINARY…` at `from`, its end in `dataEnd`; undefined otherwise. A
 * function of its own, not a closure over the parser's position: the loop keeps it in a register.
 */
function readData(text: string, bytes: Buffer, from: number): RecordData | undefined {
  const type = text.startsWith(STRING_DATA, from)
    ? 'STRING'
    : text.startsWith(BINARY_DATA, from)
      ? 'BINARY'
      : undefined;
  if (type === undefined) return undefined;
  let at = from + STRING_DATA.length;
  let read: RecordData;
  if (text.charCodeAt(at) === QUOTE) {
    const end = text.indexOf('"', at + 1);
    if (end < 0) return undefined;
    if (type === 'STRING') {
      read = { type, bytes: Buffer.from(bytes.buffer, bytes.byteOffset + at + 1, end - at - 1) };
    } else {
      try {
        read = { type, bytes: decodeBase64(text.slice(at + 1, end), '') };
      } catch {
        return undefined; // the JSON path names the field
      }
    }
    at = end + 1;
  } else if (text.startsWith('null', at)) {
    read = { type, bytes: null };
    at += 4;
  } else return undefined;
  if (text.charCodeAt(at) !== CLOSE_BRACE) return undefined;
  dataEnd = at + 1;
  return read;
}
