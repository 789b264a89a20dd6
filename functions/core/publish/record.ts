import { Buffer } from 'node:buffer';

// A record as Tally writes it: its key, value and headers as bytes (or serialized with a schema),
// whichever wire format it came in (rest-proxy/ parses them into this).

export const DATA_TYPES = ['BINARY', 'JSON', 'STRING'] as const;
export type DataType = (typeof DATA_TYPES)[number];
export const SCHEMA_DATA_TYPES = ['AVRO', 'PROTOBUF', 'JSONSCHEMA'] as const;
export type SchemaDataType = (typeof SCHEMA_DATA_TYPES)[number];

/** A key or value as written: `bytes` null is a Kafka null (reported size -1). */
export interface RecordData {
  readonly type: DataType | SchemaDataType;
  readonly bytes: Buffer | null;
  /** The registry's id of the schema it was serialized with (Glue's: a version's UUID). */
  readonly schemaId?: number | string;
  /** The subject of that schema, and its version there (REST Proxy's report has both). */
  readonly subject?: string;
  readonly schemaVersion?: number;
}

export interface RecordHeader {
  readonly name: string;
  /** The value's bytes; `NULL_HEADER_VALUE` for a Kafka null (a header with no value). */
  readonly value: Buffer;
}

/**
 * A header's null value, as REST Proxy writes a header given `"value": null` (ProduceControllerImpl:
 * `new RecordHeader(name, null)`). It is this one empty buffer, told apart from an empty value by
 * identity: it is the same size on the wire (a varint length of -1 takes one byte, as 0 does),
 * so every size Tally counts stays right, and the Kafka adapter writes it as null.
 */
export const NULL_HEADER_VALUE: Buffer = Buffer.alloc(0);

export function isNullHeaderValue(value: Buffer): boolean {
  return value === NULL_HEADER_VALUE;
}

export interface RecordInput {
  readonly partition: number | undefined;
  readonly key: RecordData | undefined;
  readonly value: RecordData | undefined;
  readonly headers: readonly RecordHeader[];
  /** Epoch milliseconds, when the client set one. */
  readonly timestamp: number | undefined;
}
