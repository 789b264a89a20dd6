import { murmur2 } from '../shared/murmur2.js';

// Which child of the reconcile fan-out owns a consumer group: Kafka's own murmur2 of the group
// id, modulo the shard count. The same id lands on the same shard in every run and every
// container (no state, no listing order), so each group is reconciled by exactly one child per
// run, and at a fixed count by the same child run after run. Changing the count moves groups
// between shards, which is harmless: a shard keeps nothing of its own, every write is per group.

/** Shards a fan-out run may use: each returns a summary, and the Map's output stays < 256 KiB. */
export const MAX_SHARDS = 64;
/** When neither the input nor the deployment says: enough for ~2,000 groups at ~250 a child. */
export const DEFAULT_SHARDS = 8;

const encoder = new TextEncoder();

/** The shard (0 … shards − 1) that owns `groupId`. */
export function shardOf(groupId: string, shards: number): number {
  return (murmur2(encoder.encode(groupId)) & 0x7fffffff) % shards;
}

/**
 * Which consumer groups one reconcile run looks at: every core step (Kafka's listing, the stored
 * history, mappings, reports and incidents) keeps only the groups it `owns`, and leaves every
 * other group's items alone — two scoped runs at once touch disjoint items.
 */
export interface GroupScope {
  owns(groupId: string): boolean;
}

/** Every group: the sequential reconcile. */
export const ALL_GROUPS: GroupScope = { owns: () => true };

/** The groups of one shard, optionally only those whose id starts with `prefix`. */
export function shardScope(shard: number, shards: number, prefix = ''): GroupScope {
  return {
    owns: (groupId) => groupId.startsWith(prefix) && shardOf(groupId, shards) === shard,
  };
}

/** The groups whose id starts with `prefix`. */
export function prefixScope(prefix: string): GroupScope {
  return { owns: (groupId) => groupId.startsWith(prefix) };
}
