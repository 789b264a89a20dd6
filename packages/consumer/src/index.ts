// @kafka-tally/consumer: what a downstream consumer of Tally's records uses. The code is the
// functions' own (functions/consumer, core/once, core/receipts, adapters/dynamodb), re-exported
// here and bundled by esbuild (build.mjs), so the package and the deployed functions run the same
// source.
//
// Reading MSK events: @aws-lambda-powertools/kafka (`kafkaConsumer`) was considered and is not
// used. It wraps a handler (not a middy middleware) and hands it its own ConsumerRecords, the
// values deserialized, in place of Lambda's event; the guard needs Lambda's event itself (each
// record's `<topic>-<partition>-<offset>` for the partial batch response, the raw header bytes)
// and never reads keys or values, so what it decodes is two headers. Depending on it would add
// its deserializers and @aws-lambda-powertools/commons for that. The two compose: a handler
// wrapped by kafkaConsumer can run inside `eachRecord`'s work, since tallyOnce leaves the event
// as Lambda delivered it.

export { createOnceStore } from '../../../functions/adapters/dynamodb/once-store.js';
export { createReceiptsStore } from '../../../functions/adapters/dynamodb/receipts-store.js';
export {
  type HeaderSource,
  headerValue,
  type TallyHeaders,
  tallyHeaders,
} from '../../../functions/consumer/tally-headers.js';
export {
  eachRecord,
  type MskBatchResponse,
  type OnceContext,
  type TallyOnceOptions,
  tallyOnce,
} from '../../../functions/consumer/tally-once.js';
export {
  type ConsumedRecord,
  type OnceEachOptions,
  tallyOnceEach,
} from '../../../functions/consumer/tally-once-each.js';
export {
  type ReceiptSink,
  type TallyReceiptsOptions,
  tallyReceipts,
} from '../../../functions/consumer/tally-receipts.js';
export type { OnceStore } from '../../../functions/core/once/run-once.js';
export type { ReceiptBatch } from '../../../functions/core/receipts/msk-receipts.js';
export { receiptsFromMsk } from '../../../functions/core/receipts/msk-receipts.js';
export {
  type HttpReceiptsOptions,
  postReceipts,
  type ReceiptBody,
  receiptBodies,
} from './http-receipts.js';
