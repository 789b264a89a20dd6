// Where a ledger block lives and how long it is kept. Pure: the DynamoDB adapter
// (adapters/dynamodb/ledger.ts) applies it.
//
// Sharding: one partition key per stream holds a stream to one DynamoDB partition's 1,000 writes
// a second (~500 requests/s at two writes a request). A block is keyed `stream#shard`, the shard
// a Fibonacci hash of its first seq, so consecutive allocations (and batches of any fixed size)
// spread evenly over LEDGER_SHARDS keys. The key of a block is known from its first seq alone:
// a read of a block by its first seq (an Idempotency-Key's reservation, the audit's UNKNOWN
// blocks, a retry) is one read of one item. `#` is not a stream character (publishing/checks.ts),
// so no stream's name is another's shard key.
//
// Retention: every write sets `expiresAt` (epoch seconds, DynamoDB TTL) to its time plus the
// retention. DynamoDB deletes an expired item typically within days, not at once, so reads treat
// an item past its `expiresAt` as gone. What expired is told from the stream's day marks: the
// first seq a publisher wrote each day (one item per stream and day), kept longer than blocks.

/** Keys per stream: 64 × 1,000 writes/s per key; see bench/ledger-shards.ts for the rate. */
export const LEDGER_SHARDS = 64;
export const DAY_MS = 86_400_000;
/** TALLY_LEDGER_RETENTION_DAYS when unset. */
export const DEFAULT_LEDGER_RETENTION_DAYS = 30;
/** Day marks outlive the blocks of their day by this long, to date what expired. */
export const DAY_MARKS_OUTLIVE_MS = 365 * DAY_MS;
/**
 * A seq's last ledger write comes at most this long after its allocation (a publish request's
 * deadline, or the audit's VOID after its horizon, at most a day): a stream whose counter last
 * moved longer than the retention and this ago has nothing left in the ledger.
 */
const LAST_WRITE_AFTER_ALLOCATION_MS = 2 * DAY_MS;

/** The shard (0..shards-1) of the block starting at `firstSeq`. */
export function ledgerShard(firstSeq: number, shards = LEDGER_SHARDS): number {
  const low = firstSeq % 2 ** 32;
  const high = Math.floor(firstSeq / 2 ** 32);
  const hash = Math.imul(low ^ Math.imul(high, 0x85ebca6b), 0x9e3779b1) >>> 0;
  return Math.floor((hash / 2 ** 32) * shards);
}

/** The partition key of the block starting at `firstSeq`. */
export function ledgerShardKey(stream: string, firstSeq: number, shards = LEDGER_SHARDS): string {
  return `${stream}#${ledgerShard(firstSeq, shards)}`;
}

/** The partition key of a stream's VOID ranges (the audit's; see adapters/dynamodb/ledger.ts). */
export function ledgerVoidKey(stream: string): string {
  return `${stream}#void`;
}

/** The partition keys a publisher's block can be under: its shards, then the key before sharding. */
export function ledgerBlockKeys(stream: string, shards = LEDGER_SHARDS): string[] {
  return [...Array.from({ length: shards }, (_, shard) => `${stream}#${shard}`), stream];
}

/**
 * Every partition key of a stream's ledger items: its shards, its VOID ranges, then the key
 * before sharding.
 */
export function ledgerPartitionKeys(stream: string, shards = LEDGER_SHARDS): string[] {
  const blocks = ledgerBlockKeys(stream, shards);
  return [...blocks.slice(0, -1), ledgerVoidKey(stream), stream];
}

/** The partition key of a stream's day marks. */
export function dayMarksKey(stream: string): string {
  return `${stream}#days`;
}

/** The TTL (epoch seconds) of an item written at `writtenAt` (ms), kept `retentionMs`. */
export function expiresAtSeconds(writtenAt: number, retentionMs: number): number {
  return Math.ceil((writtenAt + retentionMs) / 1000);
}

/** Whether an item with TTL `expiresAt` (epoch seconds; undefined: none) is gone at `now` (ms). */
export function isExpired(expiresAt: number | undefined, now: number): boolean {
  return expiresAt !== undefined && expiresAt * 1000 <= now;
}

/** The first seq a publisher wrote on a UTC day (days since the epoch). */
export interface DayMark {
  readonly day: number;
  readonly firstSeq: number;
}

/** What the retention has taken of a stream's ledger. */
export interface LedgerRetention {
  /** Seqs below this are past the retention: any block of theirs is expired. 1: none is. */
  readonly keptFrom: number;
  /**
   * The UTC day (YYYY-MM-DD) a seq below `keptFrom` expired, and whether it is that day (the
   * seq's day mark is kept) or the latest it can have been (older than every mark kept).
   */
  expiredOn(seq: number): { readonly day: string; readonly exact: boolean };
}

const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The stream's retention at `now` from its day marks and, when known, its counter: a day's
 * blocks begin to expire at its start plus the retention, so every seq first written on a day
 * that began expiring is past it. With no mark, nothing is known expired, unless the counter
 * last moved so long ago that every block of the stream has expired.
 */
export function ledgerRetention(
  marks: readonly DayMark[],
  now: number,
  retentionMs: number,
  counter?: { readonly lastSeq: number; readonly updatedAt: number },
): LedgerRetention {
  const sorted = [...marks].sort((a, b) => a.day - b.day);
  const expiring = (mark: DayMark) => mark.day * DAY_MS + retentionMs <= now;
  let keptFrom = 1;
  if (sorted.some(expiring)) {
    const kept = sorted.filter((mark) => !expiring(mark)).map((mark) => mark.firstSeq);
    keptFrom = kept.length > 0 ? Math.min(...kept) : Number.POSITIVE_INFINITY;
  }
  if (
    counter !== undefined &&
    counter.updatedAt + retentionMs + LAST_WRITE_AFTER_ALLOCATION_MS <= now
  ) {
    keptFrom = Math.max(keptFrom, counter.lastSeq + 1);
  }
  // Every day written has begun expiring: so has every seq the counter handed out (a seq
  // allocated since with no write at all is counted with them: never voided, reported expired).
  if (keptFrom === Number.POSITIVE_INFINITY && counter !== undefined)
    keptFrom = counter.lastSeq + 1;
  return {
    keptFrom,
    expiredOn(seq) {
      let day: DayMark | undefined;
      for (const mark of sorted) if (mark.firstSeq <= seq) day = mark;
      if (day !== undefined) return { day: dayText(day.day * DAY_MS + retentionMs), exact: true };
      const oldest = sorted[0];
      const latest =
        oldest !== undefined
          ? oldest.day * DAY_MS + retentionMs
          : (counter?.updatedAt ?? now) + retentionMs;
      return { day: dayText(Math.min(latest, now)), exact: false };
    },
  };
}
