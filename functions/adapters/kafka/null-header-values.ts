import Encoder from 'kafkajs/src/protocol/encoder.js';
import { NULL_HEADER_VALUE } from '../../core/publish/record.js';

// kafkajs 2.2.4 cannot write a header whose value is null: its record encoder measures every
// header value with Buffer.byteLength before it looks for null (recordBatch/record/v0), which
// throws. Tally passes a null value as core's NULL_HEADER_VALUE, an empty buffer, which kafkajs
// measures as 0 bytes; its one-byte length varint is the same size as null's (-1), so every size
// kafkajs counts stays right. This makes kafkajs's encoder write that one buffer as Kafka's null
// (length -1), which its decoder, and every Kafka client, reads back as a null value.

let installed = false;

/** Teaches kafkajs's encoder to write NULL_HEADER_VALUE as a null; once per process. */
export function encodeNullHeaderValues(): void {
  if (installed) return;
  installed = true;
  const writeVarIntBytes = Encoder.prototype.writeVarIntBytes;
  Encoder.prototype.writeVarIntBytes = function (this: Encoder, value: unknown) {
    return writeVarIntBytes.call(this, value === NULL_HEADER_VALUE ? null : value);
  };
}
