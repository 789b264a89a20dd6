import { ALL_GROUPS, type GroupScope } from './group-shards.js';
import type { ClusterSnapshot, MappingStore, StoredMapping } from './ports.js';

// Seed 002: the client → group mapping drifted because deletes raced fresh writes. Live group
// membership is the truth; every run repairs the store from it, and removes a mapping only when
// its member has been gone longer than a grace period and nobody has re-written it since.

export interface MappingRepairs {
  readonly written: number;
  readonly changed: number;
  readonly removed: number;
  /** Deletes skipped because the mapping was re-written after this run read it. */
  readonly keptNewer: number;
  readonly details: readonly {
    readonly action: string;
    readonly pk: string;
    readonly sk: string;
  }[];
}

/** The mappings live membership implies: client → group, and group → partition → owner. */
export function desiredMappings(snapshot: ClusterSnapshot): StoredMapping[] {
  const mappings: StoredMapping[] = [];
  for (const group of snapshot.groups) {
    for (const member of group.members) {
      const who = {
        memberId: member.memberId,
        clientId: member.clientId,
        clientHost: member.clientHost,
      };
      mappings.push({
        pk: `client#${member.clientHost}#${member.clientId}`,
        sk: `group#${group.groupId}`,
        attributes: { groupId: group.groupId, ...who },
        lastSeenAt: snapshot.observedAt,
      });
      for (const [topic, partitions] of Object.entries(member.assignment)) {
        for (const partition of partitions) {
          mappings.push({
            pk: `group#${group.groupId}`,
            sk: `partition#${topic}#${partition}`,
            attributes: { topic, partition, ...who },
            lastSeenAt: snapshot.observedAt,
          });
        }
      }
    }
  }
  return mappings;
}

const keyOf = (m: { pk: string; sk: string }) => `${m.pk}\u0000${m.sk}`;

/** The group a mapping belongs to: `group#<id>` is its key or its sort key. */
export const mappingGroup = (m: { pk: string; sk: string }) =>
  (m.pk.startsWith('group#') ? m.pk : m.sk).slice('group#'.length);

function sameAttributes(a: StoredMapping, b: StoredMapping): boolean {
  const names = new Set([...Object.keys(a.attributes), ...Object.keys(b.attributes)]);
  return [...names].every((name) => a.attributes[name] === b.attributes[name]);
}

export async function repairMappings(
  store: MappingStore,
  snapshot: ClusterSnapshot,
  graceMs: number,
  scope: GroupScope = ALL_GROUPS,
): Promise<MappingRepairs> {
  // A scoped run (one shard of the fan-out) neither refreshes nor removes other groups' mappings.
  const stored = new Map(
    (await store.list(scope.range))
      .filter((m) => scope.owns(mappingGroup(m)))
      .map((m) => [keyOf(m), m]),
  );
  const desired = desiredMappings(snapshot);
  const details: Array<{ action: string; pk: string; sk: string }> = [];
  let written = 0;
  let changed = 0;
  let removed = 0;
  let keptNewer = 0;
  for (const mapping of desired) {
    const current = stored.get(keyOf(mapping));
    stored.delete(keyOf(mapping));
    // Unchanged mappings are refreshed only every half grace period, to keep writes low (and
    // those stored before the byShard index at once, so a fan-out child finds them).
    const fresh =
      current &&
      current.unindexed !== true &&
      sameAttributes(current, mapping) &&
      snapshot.observedAt - current.lastSeenAt < graceMs / 2;
    if (fresh) continue;
    if (await store.upsert(mapping)) {
      if (!current) {
        written++;
        details.push({ action: 'written', pk: mapping.pk, sk: mapping.sk });
      } else if (!sameAttributes(current, mapping)) {
        changed++;
        details.push({ action: 'changed', pk: mapping.pk, sk: mapping.sk });
      }
    }
  }
  // A partial snapshot removes only mappings of groups it read: an unreadable group must not
  // look like a gone one, and one unreadable group must not keep every other group's gone
  // clients forever (runs that are always partial would let the store grow without bound).
  const read = new Set(snapshot.groups.map((g) => g.groupId));
  const complete = snapshot.unreadable.length === 0;
  for (const mapping of stored.values()) {
    if (!complete && !read.has(mappingGroup(mapping))) continue;
    if (snapshot.observedAt - mapping.lastSeenAt <= graceMs) continue;
    if (await store.deleteIfUnchanged(mapping)) {
      removed++;
      details.push({ action: 'removed', pk: mapping.pk, sk: mapping.sk });
    } else {
      keptNewer++;
      details.push({ action: 'kept-newer', pk: mapping.pk, sk: mapping.sk });
    }
  }
  return { written, changed, removed, keptNewer, details };
}
