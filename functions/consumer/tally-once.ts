import { randomUUID } from 'node:crypto';
import type { MiddlewareObj } from '@middy/core';
import type { Context, MSKEvent, MSKRecord } from 'aws-lambda';
import {
  DEFAULT_CLAIM_MS,
  DEFAULT_HORIZON_MS,
  identityOf,
  type OnceOutcome,
  type OnceRecord,
  type OnceStore,
  runOnce,
} from '../core/once/run-once.js';
import { checkMskEvent, headerText, receiptsFromMsk } from '../core/receipts/msk-receipts.js';
import type { ReceiptSink } from './tally-receipts.js';

type Resolvable<T> = T | (() => Promise<T>);

export interface TallyOnceOptions {
  /** The consumer group of the MSK event source (Lambda's event does not say it). */
  readonly group: string;
  readonly store: Resolvable<OnceStore>;
  /** Where receipts go (acted seqs as processed, suppressed ones as suppressed); optional. */
  readonly receipts?: Resolvable<ReceiptSink>;
  /** How long a claim holds: above the function's timeout (default 15 minutes). */
  readonly claimMs?: number;
  /** How long done-marks are kept (default 30 days). */
  readonly horizonMs?: number;
  /** For records without `tally.*` headers: a key to deduplicate them by (else passed through). */
  readonly keyOf?: (record: MSKRecord) => string | undefined;
  readonly now?: () => number;
  /**
   * Where the guard's warnings go (an act that outlived its claim); default `console.warn`.
   * Injected, so the package ships no logger: pass Powertools Logger's or your own.
   */
  readonly log?: (level: 'warn', message: string, fields: Record<string, unknown>) => void;
}

/** Lambda's partial batch response (ReportBatchItemFailures). */
export interface MskBatchResponse {
  readonly batchItemFailures: ReadonlyArray<{ readonly itemIdentifier: string }>;
}

/** What the handler is given: `context.once(act)` runs `act` on every record at most once. */
export interface OnceContext extends Context {
  once(act: (record: MSKRecord) => Promise<void>): Promise<MskBatchResponse>;
}

const resolver = <T>(value: Resolvable<T>) => {
  let resolved: Promise<T> | undefined;
  return () => {
    resolved ??=
      typeof value === 'function' ? (value as () => Promise<T>)() : Promise.resolve(value);
    return resolved;
  };
};

/** A Lambda MSK record as the guard sees it (`<topic>-<partition>-<offset>` is Lambda's id). */
export function onceRecord(
  record: MSKRecord,
  keyOf?: (record: MSKRecord) => string | undefined,
): OnceRecord {
  return {
    id: `${record.topic}-${record.partition}-${record.offset}`,
    lane: `${record.topic}-${record.partition}`,
    identity: identityOf(headerText(record, 'tally.stream'), headerText(record, 'tally.seq'), () =>
      keyOf?.(record),
    ),
  };
}

/**
 * Middy middleware for MSK-triggered Lambdas: the handler calls `context.once(act)`, which acts
 * on every record of the batch at most once per group (functions/core/once/run-once.ts) and answers
 * Lambda's partial batch response, so only failed records (and those after them in their
 * partition) come again. Turn on `ReportBatchItemFailures` on the event source mapping.
 */
export function tallyOnce(options: TallyOnceOptions): MiddlewareObj<MSKEvent> {
  const store = resolver(options.store);
  const receipts = options.receipts && resolver(options.receipts);
  const now = options.now ?? Date.now;
  const log = options.log ?? ((_level, message, fields) => console.warn(message, fields));
  // Per container: when each stream was last compacted (at most once a minute).
  const compacted = new Map<string, number>();
  return {
    before: async (request) => {
      // Lambda's MSK event, its shape checked: records as Lambda delivers them.
      const records = checkMskEvent(request.event as unknown) as Readonly<
        Record<string, readonly MSKRecord[]>
      >;
      (request.context as OnceContext).once = async (act) => {
        const list = Object.values(records).flat();
        const byId = new Map(list.map((r) => [`${r.topic}-${r.partition}-${r.offset}`, r]));
        const outcome = await runOnce(
          list.map((r) => onceRecord(r, options.keyOf)),
          (r) => act(byId.get(r.id) as MSKRecord),
          {
            group: options.group,
            store: await store(),
            now,
            newToken: randomUUID,
            claimMs: options.claimMs ?? DEFAULT_CLAIM_MS,
            horizonMs: options.horizonMs ?? DEFAULT_HORIZON_MS,
            compacted,
          },
        );
        if (outcome.overrun > 0) {
          // Claims that lapsed while their act ran and were taken over: those may have acted twice.
          log('warn', 'once: acts outlived their claims', { overrun: outcome.overrun });
        }
        if (receipts) {
          const fate = fatesOf(outcome);
          const batches = receiptsFromMsk(options.group, records, (r) =>
            fate(`${r.topic}-${r.partition}-${r.offset}`),
          );
          if (batches.length > 0) await (await receipts()).writeAll(batches);
        }
        return { batchItemFailures: outcome.failed.map((r) => ({ itemIdentifier: r.id })) };
      };
    },
  };
}

/**
 * The handler of a stack with tallyOnce: `work` runs on each record of the batch at most once
 * for the group; the answer is Lambda's partial batch response.
 */
export function eachRecord(work: (record: MSKRecord) => Promise<void>) {
  return (_event: MSKEvent, context: Context): Promise<MskBatchResponse> => {
    const { once } = context as Partial<OnceContext>;
    if (once === undefined) throw new Error('eachRecord: add the tallyOnce middleware first');
    return once(work);
  };
}

function fatesOf(outcome: OnceOutcome) {
  const fates = new Map<string, 'suppressed' | 'failed'>();
  for (const r of outcome.suppressed) fates.set(r.id, 'suppressed');
  for (const r of outcome.failed) fates.set(r.id, 'failed');
  return (id: string) => fates.get(id) ?? 'acted';
}
