import { murmur2 } from '../shared/murmur2.js';

// Which child of the reconcile fan-out owns a consumer group: Kafka's murmur2 of the group id
// (31 bits), cut into `shards` equal ranges. The same id lands on the same shard in every run and
// every container (no state, no listing order), so each group is reconciled by exactly one child
// per run, and at a fixed count by the same child run after run. Changing the count moves groups
// between shards, which is harmless: a shard keeps nothing of its own, every write is per group.
// Ranges, not a modulo, so that a child reads only its own groups' items at any shard count:
// every mapping and history item carries its group's hash (sort key) under one of SHARD_BUCKETS
// buckets (partition key) of the `byShard` index, and a shard is a hash range over a few buckets.

/** Shards a fan-out run may use: each returns a summary, and the Map's output stays < 256 KiB. */
export const MAX_SHARDS = 64;
/** When neither the input nor the deployment says: enough for ~2,000 groups at ~250 a child. */
export const DEFAULT_SHARDS = 8;

const encoder = new TextEncoder();
const HASHES = 2 ** 31;
/** Partition keys of the `byShard` index: a shard of N spans ceil(64 / N) + 1 of them at most. */
export const SHARD_BUCKETS = 64;

/** A group's place in the `byShard` index: its 31-bit hash and the bucket holding that hash. */
export function shardKey(groupId: string): { readonly bucket: number; readonly hash: number } {
  const hash = murmur2(encoder.encode(groupId)) & 0x7fffffff;
  return { bucket: Math.floor((hash * SHARD_BUCKETS) / HASHES), hash };
}

/** The shard (0 … shards − 1) that owns `groupId`. */
export function shardOf(groupId: string, shards: number): number {
  return Math.floor((shardKey(groupId).hash * shards) / HASHES);
}

/** What one shard's groups occupy in the `byShard` index: per bucket, a hash range (inclusive). */
export interface ShardRange {
  readonly shard: number;
  readonly shards: number;
  readonly buckets: ReadonlyArray<{
    readonly bucket: number;
    readonly from: number;
    readonly to: number;
  }>;
}

/** The hashes `shard` of `shards` owns (those h with floor(h · shards / 2^31) = shard), by bucket. */
export function shardRange(shard: number, shards: number): ShardRange {
  const from = Math.ceil((shard * HASHES) / shards);
  const to = Math.ceil(((shard + 1) * HASHES) / shards) - 1;
  const buckets: Array<{ bucket: number; from: number; to: number }> = [];
  for (
    let b = Math.floor((from * SHARD_BUCKETS) / HASHES);
    b * (HASHES / SHARD_BUCKETS) <= to;
    b++
  ) {
    const lo = b * (HASHES / SHARD_BUCKETS);
    const hi = lo + HASHES / SHARD_BUCKETS - 1;
    buckets.push({ bucket: b, from: Math.max(from, lo), to: Math.min(to, hi) });
  }
  return { shard, shards, buckets };
}

/**
 * Which consumer groups one reconcile run looks at: every core step (Kafka's listing, the stored
 * history, mappings, reports and incidents) keeps only the groups it `owns`, and leaves every
 * other group's items alone — two scoped runs at once touch disjoint items.
 */
export interface GroupScope {
  owns(groupId: string): boolean;
  /** One shard's: stores read only its range of the `byShard` index, not the whole table. */
  readonly range?: ShardRange;
}

/** Every group: the sequential reconcile. */
export const ALL_GROUPS: GroupScope = { owns: () => true };

/** The groups of one shard, optionally only those whose id starts with `prefix`. */
export function shardScope(shard: number, shards: number, prefix = ''): GroupScope {
  return {
    owns: (groupId) => groupId.startsWith(prefix) && shardOf(groupId, shards) === shard,
    range: shardRange(shard, shards),
  };
}

/** The groups whose id starts with `prefix`. */
export function prefixScope(prefix: string): GroupScope {
  return { owns: (groupId) => groupId.startsWith(prefix) };
}
