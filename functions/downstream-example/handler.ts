// An example downstream consumer: an MSK-triggered Lambda whose work runs at most once per
// record for its group (tallyOnce: duplicates Tally can see are suppressed), and which tells the
// audit what it acted on and what it suppressed (receipts).
import middy from '@middy/core';
import type { MSKEvent, MSKRecord } from 'aws-lambda';
import { onceConfig, onceStore } from '../consumer/once-store-runtime.js';
import { receiptsStore } from '../consumer/receipts-store-runtime.js';
import { eachRecord, type MskBatchResponse, tallyOnce } from '../consumer/tally-once.js';
import { receiptsGroup } from '../platform/config.js';
import { log } from '../platform/log.js';
import { tracing } from '../platform/tracing.js';

/**
 * The example's stack around any per-record work (tests give theirs; Lambda gets `count`),
 * traced when tracing is on (TALLY_TRACING).
 */
export function downstreamHandler(
  work: (record: MSKRecord) => Promise<void>,
  group: string = receiptsGroup(),
) {
  const { claimMs, horizonMs } = onceConfig;
  return middy<MSKEvent, MskBatchResponse>()
    .use(tracing.middlewares())
    .use(tallyOnce({ group, store: onceStore, receipts: receiptsStore, claimMs, horizonMs, log }))
    .handler(eachRecord(work));
}

// Real processing goes here; the example only logs.
export const handler = downstreamHandler(async (record) => {
  log('debug', 'downstream record processed', {
    partition: record.partition,
    offset: record.offset,
  });
});
