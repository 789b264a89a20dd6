import { UnsupportedSchemaError } from './errors.js';

export type SchemaType = 'AVRO' | 'PROTOBUF' | 'JSON';

/** Where a value first departs from its schema: `path` is dotted (`lines[2].sku`), '' the root. */
export interface SchemaIssue {
  readonly path: string;
  readonly message: string;
}

/** One compiled schema: checks a value and serializes it, both in one pass. */
export interface Codec {
  readonly type: SchemaType;
  /** The record's or message's full name (RecordNameStrategy), when the schema names one. */
  readonly recordName: string | undefined;
  /** The bytes that follow the wire format's 5-byte header, or the first mismatch. */
  encode(value: unknown): { readonly bytes: Uint8Array } | { readonly issue: SchemaIssue };
}

export function joinPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

/** Compiles with `compile`, turning a parser's error into an UnsupportedSchemaError. */
export function compileOrRefuse(type: SchemaType, what: string, compile: () => Codec): Codec {
  try {
    return compile();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UnsupportedSchemaError(`${what} is not a ${type} schema Tally can use: ${reason}`, {
      cause: error,
    });
  }
}
