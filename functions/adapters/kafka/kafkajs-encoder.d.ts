// The one kafkajs module Tally reaches into (null-header-values.ts): its wire encoder.
declare module 'kafkajs/src/protocol/encoder.js' {
  export default class Encoder {
    writeVarIntBytes(value: unknown): Encoder;
    writeVarInt(value: number): Encoder;
    readonly buffer: Buffer;
  }
}
