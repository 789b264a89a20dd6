import { type DoneRange, foldDone, rangeCovers, rangesHave } from './once-ranges.js';

// The once guard: every record a consumer group acts on is claimed first, on (group, stream,
// seq), by a conditional write; marked done after the act; released when the act fails. A record
// whose seq is done is suppressed (skipped and counted). A claim stores its expiry: a claimant
// that died holds it until then, after which another may take it over (a conditional write, not
// DynamoDB's TTL). Done-marks are one small item per seq at first, folded later into ranges per
// (group, stream, partition) — see once-ranges.ts — by `compact`, after `settleMs`.
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

/** What is stored for one (group, stream), read consistently in one go. */
export interface StreamMarks {
  readonly lanes: ReadonlyMap<string, { readonly ranges: DoneRange[]; readonly version: number }>;
  /** Per-seq marks not folded into ranges yet. */
  readonly marks: ReadonlyMap<number, StoredMark>;
}

export type MarkKey =
  | { readonly group: string; readonly stream: string; readonly seq: number }
  | { readonly group: string; readonly key: string };

export interface OnceStore {
  read(group: string, stream: string): Promise<StreamMarks>;
  /** A new claim, or a takeover of one expired before `now`; else what holds the mark. */
  claim(
    at: MarkKey,
    claim: { token: string; lane: string; expiresAt: number; now: number },
  ): Promise<'claimed' | 'done' | 'held'>;
  /** Marks done a claim still held by `token`; false when it was taken over meanwhile. */
  finish(at: MarkKey, token: string, now: number): Promise<boolean>;
  release(at: MarkKey, token: string): Promise<void>;
  /** Writes a partition's ranges over the version read (false: another writer was first). */
  saveRanges(
    group: string,
    stream: string,
    lane: string,
    ranges: readonly DoneRange[],
    version: number,
  ): Promise<boolean>;
  /** Deletes per-seq marks that are folded into ranges (DONE) or long dead (CLAIMED). */
  dropMarks(group: string, stream: string, seqs: readonly number[]): Promise<void>;
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
 * How long a per-seq done-mark stays before it is folded (and its item deleted): far longer than
 * one run keeps a snapshot of the marks (SNAPSHOT_SHARE of it), so a claim made on a snapshot
 * that missed a mark always finds the mark's item still there (see `compact`). Clocks may differ
 * by a few seconds, not by hours.
 */
export const settleMs = (claimMs: number) => Math.max(2 * claimMs, 3_600_000);
const SNAPSHOT_SHARE = 4;
/** Most per-seq marks one run folds and deletes: the rest wait for later runs. */
export const COMPACT_PER_RUN = 200;

class Snapshots {
  readonly #byStream = new Map<string, { marks: StreamMarks; at: number }>();
  constructor(private readonly options: OnceOptions) {}

  async get(stream: string): Promise<StreamMarks> {
    const { group, store, now, claimMs } = this.options;
    const held = this.#byStream.get(stream);
    if (held && now() - held.at < settleMs(claimMs) / SNAPSHOT_SHARE) return held.marks;
    const at = now();
    const marks = await store.read(group, stream);
    this.#byStream.set(stream, { marks, at });
    return marks;
  }

  streams(): string[] {
    return [...this.#byStream.keys()];
  }
}

function isDone(marks: StreamMarks, seq: number): boolean {
  if (marks.marks.get(seq)?.state === 'DONE') return true;
  for (const { ranges } of marks.lanes.values()) if (rangesHave(ranges, seq)) return true;
  return false;
}

/**
 * Runs `act` on every record at most once per group (see the file's comment): lanes one after
 * another, records in order within a lane.
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
  for (const lane of lanes.values()) {
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
  }
  for (const stream of snapshots.streams()) await compact(group, stream, store, options, now());
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
 * Folds per-seq done-marks older than settleMs into their partition's ranges, then deletes
 * them; drops claims dead for longer than the horizon. A mark's item is deleted only after its
 * seq is in a saved range, and only once it has settled: a claim made from a snapshot read
 * before the mark was written comes within a snapshot's lifetime, far inside settleMs, and so
 * finds the item (and fails as "done") rather than an empty place.
 */
export async function compact(
  group: string,
  stream: string,
  store: OnceStore,
  options: Pick<OnceOptions, 'claimMs' | 'horizonMs'> & { readonly perRun?: number },
  at: number,
): Promise<{ folded: number; dropped: number }> {
  const perRun = options.perRun ?? COMPACT_PER_RUN;
  const marks = await store.read(group, stream);
  const settled = at - settleMs(options.claimMs);
  const byLane = new Map<string, Array<readonly [number, number]>>();
  const dead: number[] = [];
  let taken = 0;
  for (const [seq, mark] of [...marks.marks].sort((a, b) => a[0] - b[0])) {
    if (taken >= perRun) break;
    if (mark.state === 'DONE' && mark.doneAt <= settled) {
      const seqs = byLane.get(mark.lane) ?? [];
      seqs.push([seq, mark.doneAt]);
      byLane.set(mark.lane, seqs);
      taken++;
    } else if (mark.state === 'CLAIMED' && mark.expiresAt < at - options.horizonMs) {
      dead.push(seq);
      taken++;
    }
  }
  const folded: number[] = [];
  // Every seq done in any partition, stored or folded now: a partition's gaps within it bridge.
  const anywhere = foldDone(
    [...marks.lanes.values()].flatMap((l) => l.ranges),
    [...byLane.values()].flat(),
    { horizon: Number.NEGATIVE_INFINITY, maxRanges: Number.POSITIVE_INFINITY },
  );
  for (const [lane, seqs] of byLane) {
    const stored = marks.lanes.get(lane) ?? { ranges: [], version: 0 };
    const ranges = foldDone(stored.ranges, seqs, {
      horizon: at - options.horizonMs,
      doneElsewhere: (from, to) => rangeCovers(anywhere, from, to),
    });
    if (await store.saveRanges(group, stream, lane, ranges, stored.version))
      folded.push(...seqs.map(([seq]) => seq));
  }
  // Horizon: ranges of partitions with nothing new are pruned too, now and then.
  for (const [lane, stored] of marks.lanes) {
    if (byLane.has(lane)) continue;
    const kept = stored.ranges.filter((r) => r[2] >= at - options.horizonMs);
    if (kept.length < stored.ranges.length)
      await store.saveRanges(group, stream, lane, kept, stored.version);
  }
  if (folded.length + dead.length > 0) await store.dropMarks(group, stream, [...folded, ...dead]);
  return { folded: folded.length, dropped: dead.length };
}
