import { toRuns } from '../receipts/msk-receipts.js';
import { type DoneRange, foldDone, rangeCovers, rangesHave } from './done-ranges.js';

// The once guard: every record a consumer group acts on is claimed first, on (group, stream,
// seq), by a conditional write; marked done after the act; released when the act fails. A record
// whose seq is done is suppressed (skipped and counted). A claim stores its expiry: a claimant
// that died holds it until then, after which another may take it over (a conditional write, not
// DynamoDB's TTL). Done-marks are one small item per seq at first, folded later into ranges per
// (group, stream, partition) — see once-ranges.ts — by `compact`, whose marks are deleted only
// `settleMs` after the ranges holding them were saved.
//
// Partial batch response. Lambda's Kafka event source mapping (MSK and self-managed, in
// provisioned mode, with `ReportBatchItemFailures` among its function response types) takes
// `{batchItemFailures: [{itemIdentifier}]}` with `<topic>-<partition>-<offset>` identifiers; as
// for the other stream sources it checkpoints each partition at its lowest failed offset and
// delivers everything from there again. So records after a failed one in the same partition
// would come back anyway: the guard does not act on them (their effects would run out of order)
// and reports them failed too. Other partitions go on.

/** A record as the guard sees it, whatever the transport. */
export interface OnceRecord {
  /** Reported when the record failed: `<topic>-<partition>-<offset>` for Lambda. */
  readonly id: string;
  /** Order is kept within a lane (a topic-partition); a failure stops the rest of its lane. */
  readonly lane: string;
  /** Tally's headers; or a key the caller derived; undefined: passed through unguarded. */
  readonly identity: OnceIdentity | undefined;
}

export type OnceIdentity =
  | { readonly stream: string; readonly seq: number }
  | { readonly key: string; readonly seq?: undefined };

/** Tally's headers when they name a stream and seq; else the caller's key; else none. */
export function identityOf(
  stream: string | undefined,
  seqText: string | undefined,
  keyOf: () => string | undefined,
): OnceIdentity | undefined {
  const seq = Number(seqText);
  if (stream && Number.isSafeInteger(seq) && seq > 0) return { stream, seq };
  const key = keyOf();
  return key === undefined ? undefined : { key };
}

/** Defaults: a claim outlives Lambda's longest invocation; marks are kept a month. */
export const DEFAULT_CLAIM_MS = 900_000;
export const DEFAULT_HORIZON_MS = 30 * 86_400_000;

export interface StoredMark {
  readonly state: 'CLAIMED' | 'DONE';
  readonly lane: string;
  /** CLAIMED: when the claim lapses (ms). */
  readonly expiresAt: number;
  /** DONE: when it was marked (ms). */
  readonly doneAt: number;
}

/** Seqs folded into a partition's ranges at `at` whose per-seq marks are not deleted yet. */
export type PendingDelete = readonly [at: number, seqs: ReadonlyArray<readonly [number, number]>];

export interface LaneRanges {
  readonly ranges: readonly DoneRange[];
  readonly pending: readonly PendingDelete[];
  readonly version: number;
}

/** A partition's folded done-marks, per partition of one (group, stream). */
export type StreamRanges = ReadonlyMap<string, LaneRanges>;

export type MarkKey =
  | { readonly group: string; readonly stream: string; readonly seq: number }
  | { readonly group: string; readonly key: string };

export interface OnceStore {
  /** Every partition's ranges of a (group, stream), read consistently. */
  read(group: string, stream: string): Promise<StreamRanges>;
  /** A new claim, or a takeover of one expired before `now`; else what holds the mark. */
  claim(
    at: MarkKey,
    claim: { token: string; lane: string; expiresAt: number; now: number },
  ): Promise<'claimed' | 'done' | 'held'>;
  /** Marks done a claim still held by `token`; false when it was taken over meanwhile. */
  finish(at: MarkKey, token: string, now: number): Promise<boolean>;
  release(at: MarkKey, token: string): Promise<void>;
  /**
   * Up to `limit` per-seq marks to fold, passing over those `skip` says are folded already:
   * DONE ones, and claims that lapsed before `deadBefore`.
   */
  marks(
    group: string,
    stream: string,
    options: { deadBefore: number; limit: number; skip: (seq: number) => boolean },
  ): Promise<Array<readonly [seq: number, mark: StoredMark]>>;
  /** Writes a partition's ranges over the version read (false: another writer was first). */
  saveRanges(
    group: string,
    stream: string,
    lane: string,
    ranges: Omit<LaneRanges, 'version'>,
    version: number,
  ): Promise<boolean>;
  /** Deletes per-seq marks (folded long enough ago, or dead claims). */
  dropMarks(group: string, stream: string, seqs: readonly number[]): Promise<void>;
  /**
   * Deletes up to `limit` marks of caller-derived keys done (or claims lapsed) before `before`,
   * reading only those; returns how many. A store without it keeps every keyed mark.
   */
  pruneKeyed?(group: string, before: number, limit: number): Promise<number>;
}

export interface OnceOptions {
  readonly group: string;
  readonly store: OnceStore;
  readonly now: () => number;
  readonly newToken: () => string;
  /** How long a claim holds: longer than the act can take (the function's timeout). */
  readonly claimMs: number;
  /** Done-marks are kept this long (ms) after their last mark; redeliveries older act again. */
  readonly horizonMs: number;
  /**
   * When this container last compacted each stream (kept across invocations by the caller):
   * a stream is compacted at most every COMPACT_EVERY_MS.
   */
  readonly compacted?: Map<string, number>;
}

export interface OnceOutcome {
  readonly acted: readonly OnceRecord[];
  readonly suppressed: readonly OnceRecord[];
  /** No identity: acted on without a claim. */
  readonly passed: readonly OnceRecord[];
  /** Not acted on (this run): the failed record and those after it in its lane. */
  readonly failed: readonly OnceRecord[];
  /** A claim that expired while its act ran and was taken over: the act may have run twice. */
  readonly overrun: number;
}

/**
 * How long a per-seq mark outlives the save of the ranges it was folded into: far longer than a
 * run keeps a snapshot of the ranges (SNAPSHOT_MAX_AGE_MS). A claim made from a snapshot that
 * predates a fold therefore finds the mark's item still there (and fails as "done"); one made
 * after the item is gone comes from a snapshot that holds the seq. Clocks may differ by
 * seconds, not by the better part of two minutes.
 */
export const SETTLE_MS = 120_000;
/** Longest a run trusts the ranges it read before reading them again. */
export const SNAPSHOT_MAX_AGE_MS = 10_000;
/** Most per-seq marks one compaction folds: the rest wait for later ones. */
export const COMPACT_PER_RUN = 2000;
export const COMPACT_EVERY_MS = 60_000;
/** The `compacted` entry of the keyed marks' pruning (no stream is named so). */
const KEYED = '\u0000keyed';

class Snapshots {
  readonly #byStream = new Map<string, { ranges: StreamRanges; at: number }>();
  constructor(private readonly options: OnceOptions) {}

  async get(stream: string): Promise<StreamRanges> {
    const { group, store, now } = this.options;
    const held = this.#byStream.get(stream);
    if (held && now() - held.at < SNAPSHOT_MAX_AGE_MS) return held.ranges;
    const at = now();
    const ranges = await store.read(group, stream);
    this.#byStream.set(stream, { ranges, at });
    return ranges;
  }

  streams(): string[] {
    return [...this.#byStream.keys()];
  }
}

function isDone(lanes: StreamRanges, seq: number): boolean {
  for (const { ranges } of lanes.values()) if (rangesHave(ranges, seq)) return true;
  return false;
}

/**
 * Runs `act` on every record at most once per group (see the file's comment): lanes side by
 * side, records in order within a lane.
 */
export async function runOnce(
  records: readonly OnceRecord[],
  act: (record: OnceRecord) => Promise<void>,
  options: OnceOptions,
): Promise<OnceOutcome> {
  const { group, store, now } = options;
  const outcome = {
    acted: [] as OnceRecord[],
    suppressed: [] as OnceRecord[],
    passed: [] as OnceRecord[],
    failed: [] as OnceRecord[],
    overrun: 0,
  };
  const snapshots = new Snapshots(options);
  const lanes = new Map<string, OnceRecord[]>();
  for (const record of records) {
    const lane = lanes.get(record.lane) ?? [];
    lane.push(record);
    lanes.set(record.lane, lane);
  }
  // Partitions side by side (order matters only within one), records in order within each.
  await Promise.all(
    [...lanes.values()].map(async (lane) => {
      for (const [i, record] of lane.entries()) {
        const step = await once(record, act, options, snapshots);
        if (step === 'failed') {
          outcome.failed.push(...lane.slice(i));
          break;
        }
        if (step === 'overrun') {
          outcome.overrun++;
          outcome.acted.push(record);
        } else outcome[step].push(record);
      }
    }),
  );
  // Each list in the batch's order, whichever partition finished first.
  const order = new Map(records.map((r, i) => [r, i]));
  for (const list of [outcome.acted, outcome.suppressed, outcome.passed, outcome.failed])
    list.sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
  for (const stream of snapshots.streams()) {
    const last = options.compacted?.get(stream) ?? Number.NEGATIVE_INFINITY;
    if (now() - last < COMPACT_EVERY_MS) continue;
    options.compacted?.set(stream, now());
    await compact(group, stream, store, options, now());
  }
  // Keyed marks cannot fold into ranges: those past the horizon are deleted, as often.
  const keyed = records.some((r) => r.identity !== undefined && r.identity.seq === undefined);
  const lastPruned = options.compacted?.get(KEYED) ?? Number.NEGATIVE_INFINITY;
  if (keyed && store.pruneKeyed && now() - lastPruned >= COMPACT_EVERY_MS) {
    options.compacted?.set(KEYED, now());
    await store.pruneKeyed(group, now() - options.horizonMs, COMPACT_PER_RUN);
  }
  return outcome;
}

async function once(
  record: OnceRecord,
  act: (record: OnceRecord) => Promise<void>,
  options: OnceOptions,
  snapshots: Snapshots,
): Promise<'acted' | 'suppressed' | 'passed' | 'failed' | 'overrun'> {
  const { identity } = record;
  if (identity === undefined) {
    try {
      await act(record);
      return 'passed';
    } catch {
      return 'failed';
    }
  }
  const { group, store, now, newToken, claimMs } = options;
  const key: MarkKey =
    identity.seq === undefined
      ? { group, key: identity.key }
      : { group, stream: identity.stream, seq: identity.seq };
  if ('seq' in key && isDone(await snapshots.get(key.stream), key.seq)) return 'suppressed';
  const token = newToken();
  const claimed = await store.claim(key, {
    token,
    lane: record.lane,
    expiresAt: now() + claimMs,
    now: now(),
  });
  if (claimed === 'done') return 'suppressed';
  // Held by a live claimant (another consumer of the group, mid-act): ask for it again later.
  if (claimed === 'held') return 'failed';
  try {
    await act(record);
  } catch {
    await store.release(key, token);
    return 'failed';
  }
  return (await store.finish(key, token, now())) ? 'acted' : 'overrun';
}

/**
 * Folds per-seq done-marks into their partition's ranges (saved with the seqs as pending
 * deletion), deletes the marks of folds saved more than settleMs ago, drops claims dead for
 * longer than the horizon and ranges past it. See settleMs for why deletion waits.
 */
export async function compact(
  group: string,
  stream: string,
  store: OnceStore,
  options: Pick<OnceOptions, 'horizonMs'> & { readonly perRun?: number },
  at: number,
): Promise<{ folded: number; deleted: number }> {
  const lanes = await store.read(group, stream);
  const horizon = at - options.horizonMs;
  let deleted = 0;
  const current = new Map<string, LaneRanges>();
  for (const [lane, stored] of lanes) {
    const due = stored.pending.filter(([savedAt]) => savedAt <= at - SETTLE_MS);
    const ranges = stored.ranges.filter((r) => r[2] >= horizon);
    if (due.length === 0 && ranges.length === stored.ranges.length) {
      current.set(lane, stored);
      continue;
    }
    const seqs = due.flatMap(([, runs]) => runs.flatMap(([from, to]) => seqsOf(from, to)));
    await store.dropMarks(group, stream, seqs);
    const pending = stored.pending.filter((p) => !due.includes(p));
    const saved = await store.saveRanges(group, stream, lane, { ranges, pending }, stored.version);
    if (saved) {
      deleted += seqs.length;
      current.set(lane, { ranges, pending, version: stored.version + 1 });
    }
  }
  const folding = [...current.values()];
  const marks = await store.marks(group, stream, {
    deadBefore: horizon,
    limit: options.perRun ?? COMPACT_PER_RUN,
    skip: (seq) => folding.some((l) => rangesHave(l.ranges, seq)),
  });
  const byLane = new Map<string, Array<readonly [number, number]>>();
  const dead: number[] = [];
  for (const [seq, mark] of marks) {
    if (mark.state === 'CLAIMED') {
      dead.push(seq);
      continue;
    }
    const seqs = byLane.get(mark.lane) ?? [];
    seqs.push([seq, mark.doneAt]);
    byLane.set(mark.lane, seqs);
  }
  // Every seq done in any partition, stored or folded now: a partition's gaps within it bridge.
  const anywhere = foldDone(
    [...current.values()].flatMap((l) => l.ranges),
    [...byLane.values()].flat(),
    { horizon: Number.NEGATIVE_INFINITY, maxRanges: Number.POSITIVE_INFINITY },
  );
  let folded = 0;
  for (const [lane, seqs] of byLane) {
    const stored = current.get(lane) ?? { ranges: [], pending: [], version: 0 };
    const ranges = foldDone(stored.ranges, seqs, {
      horizon,
      doneElsewhere: (from, to) => rangeCovers(anywhere, from, to),
    });
    const runs = toRuns(seqs.map(([seq]) => seq).sort((a, b) => a - b));
    const pending = [...stored.pending, [at, runs] as const];
    if (await store.saveRanges(group, stream, lane, { ranges, pending }, stored.version))
      folded += seqs.length;
  }
  if (dead.length > 0) await store.dropMarks(group, stream, dead);
  return { folded, deleted };
}

const seqsOf = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);
