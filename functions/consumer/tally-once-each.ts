import { randomUUID } from 'node:crypto';
import {
  DEFAULT_CLAIM_MS,
  DEFAULT_HORIZON_MS,
  identityOf,
  type OnceRecord,
  type OnceStore,
  runOnce,
} from '../core/once/run-once.js';
import { headerValue } from './tally-headers.js';

// The once guard for consumers that are not Lambdas (a kafkajs `eachBatch`, a container, a
// job): the same claims and done-marks as the middleware, on records in kafkajs' shape.

type HeaderValue = Buffer | string | ReadonlyArray<Buffer | string> | undefined;

export interface ConsumedRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string | number;
  readonly headers?: Readonly<Record<string, HeaderValue>>;
}

export interface OnceEachOptions<R extends ConsumedRecord> {
  readonly group: string;
  readonly store: OnceStore;
  readonly claimMs?: number;
  readonly horizonMs?: number;
  readonly keyOf?: (record: R) => string | undefined;
  readonly now?: () => number;
}

/** Per process and group: when each stream was last compacted (at most once a minute). */
const compactions = new Map<string, Map<string, number>>();

/**
 * Acts on each record at most once per group. Records after a failed one in its partition are
 * not acted on: `retryFrom` names, per partition, the offset to seek back to (or not commit past).
 */
export async function tallyOnceEach<R extends ConsumedRecord>(
  options: OnceEachOptions<R>,
  records: readonly R[],
  act: (record: R) => Promise<void>,
) {
  const byId = new Map<string, R>();
  const guarded = records.map((record): OnceRecord => {
    const id = `${record.topic}-${record.partition}-${record.offset}`;
    byId.set(id, record);
    return {
      id,
      lane: `${record.topic}-${record.partition}`,
      identity: identityOf(
        headerValue(record, 'tally.stream'),
        headerValue(record, 'tally.seq'),
        () => options.keyOf?.(record),
      ),
    };
  });
  const compacted = compactions.get(options.group) ?? new Map<string, number>();
  compactions.set(options.group, compacted);
  const outcome = await runOnce(guarded, (r) => act(byId.get(r.id) as R), {
    group: options.group,
    store: options.store,
    now: options.now ?? Date.now,
    newToken: randomUUID,
    claimMs: options.claimMs ?? DEFAULT_CLAIM_MS,
    horizonMs: options.horizonMs ?? DEFAULT_HORIZON_MS,
    compacted,
  });
  const pick = (list: readonly OnceRecord[]) => list.map((r) => byId.get(r.id) as R);
  const retryFrom = new Map<string, { topic: string; partition: number; offset: string }>();
  for (const record of pick(outcome.failed)) {
    const lane = `${record.topic}-${record.partition}`;
    if (!retryFrom.has(lane)) retryFrom.set(lane, { ...record, offset: String(record.offset) });
  }
  return {
    acted: pick(outcome.acted),
    suppressed: pick(outcome.suppressed),
    passed: pick(outcome.passed),
    failed: pick(outcome.failed),
    retryFrom: [...retryFrom.values()].map(({ topic, partition, offset }) => ({
      topic,
      partition,
      offset,
    })),
  };
}
