import type { MiddlewareObj } from '@middy/core';
import type { MSKEvent } from 'aws-lambda';
import {
  checkMskEvent,
  type ReceiptBatch,
  receiptsFromMsk,
} from '../core/receipts/msk-receipts.js';

export interface ReceiptSink {
  writeAll(batches: readonly ReceiptBatch[]): Promise<void>;
}

export interface TallyReceiptsOptions {
  /** The consumer group of the MSK event source (Lambda's event does not say it). */
  readonly group: string;
  readonly sink: ReceiptSink | (() => Promise<ReceiptSink>);
}

/**
 * Middy middleware for MSK-triggered Lambdas: after the handler has processed a batch, records
 * which stream/seq and partition/offset it processed, for the audit (batched DynamoDB writes).
 * If the receipts cannot be written the invocation fails, so the batch is delivered again and
 * its receipts written then: a processed batch is never left without its receipts.
 */
export function tallyReceipts(options: TallyReceiptsOptions): MiddlewareObj<MSKEvent> {
  let sink: Promise<ReceiptSink> | undefined;
  const resolveSink = () => {
    sink ??= typeof options.sink === 'function' ? options.sink() : Promise.resolve(options.sink);
    return sink;
  };
  return {
    // A malformed event is refused before the handler reads it.
    before: async (request) => {
      checkMskEvent(request.event as unknown);
    },
    after: async (request) => {
      const batches = receiptsFromMsk(options.group, request.event.records ?? {});
      if (batches.length > 0) await (await resolveSink()).writeAll(batches);
    },
  };
}
