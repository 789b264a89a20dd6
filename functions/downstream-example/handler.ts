// An example downstream consumer: an MSK-triggered Lambda that processes records and, through
// the tallyReceipts middleware, tells the audit which records it processed.
import middy from '@middy/core';
import type { MSKEvent } from 'aws-lambda';
import { receiptsGroup } from '../platform/config.js';
import { log } from '../platform/log.js';
import { tallyReceipts } from '../receipts/middleware.js';
import { receiptsStore } from '../receipts/store-runtime.js';

export const handler = middy<MSKEvent, { processed: number }>()
  .use(tallyReceipts({ group: receiptsGroup(), sink: receiptsStore }))
  .handler(async (event) => {
    // Real processing goes here; the example only counts.
    const processed = Object.values(event.records ?? {}).reduce(
      (sum, list) => sum + list.length,
      0,
    );
    log('info', 'downstream batch processed', { processed });
    return { processed };
  });
