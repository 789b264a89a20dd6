import { ALL_GROUPS, type GroupScope } from '../../functions/core/reconcile/group-shards.js';
import type {
  ClusterSnapshot,
  GroupMember,
  GroupSnapshot,
  GroupSource,
  PartitionOffsets,
} from '../../functions/core/reconcile/ports.js';

// A Kafka cluster in memory, read the way adapters/kafka/group-reader.ts reads the real one:
// live groups plus the groups and partitions named by history, a group known only from history
// read without commits (Kafka expired them), deleted topics left out, undescribable groups
// named in `unreadable`. The clock is the caller's.

export interface FakeGroup {
  state: string;
  members: GroupMember[];
  /** `topic#partition` → committed offset. */
  commits: Map<string, number>;
}

export class FakeCluster {
  /** topic → per partition [logStart, logEnd]. */
  readonly topics = new Map<string, Array<{ logStart: number; logEnd: number }>>();
  readonly groups = new Map<string, FakeGroup>();
  /** Groups whose describe fails in the next reads. */
  readonly describeFails = new Set<string>();

  source(now: () => number): GroupSource {
    return { read: async (also, scope) => this.read(also, now(), scope) };
  }

  /** With a `scope`, only the groups it owns (one shard of the fan-out), as the adapter reads. */
  read(
    also: ReadonlyMap<string, ReadonlySet<string>>,
    observedAt: number,
    scope: GroupScope = ALL_GROUPS,
  ): ClusterSnapshot {
    const unreadable = [...this.groups.keys()]
      .filter((g) => this.describeFails.has(g) && scope.owns(g))
      .map((g) => `group ${g}: describe failed (fake)`);
    const ids = [...new Set([...this.groups.keys(), ...also.keys()])]
      .filter((g) => !this.describeFails.has(g) && scope.owns(g))
      .sort();
    const groups: GroupSnapshot[] = [];
    for (const groupId of ids) {
      const live = this.groups.get(groupId);
      const partitions = new Map<string, PartitionOffsets>();
      const add = (key: string, committed: number | null) => {
        const at = key.lastIndexOf('#');
        const topic = key.slice(0, at);
        const partition = Number(key.slice(at + 1));
        const log = this.topics.get(topic)?.[partition];
        const existing = partitions.get(key);
        if (!log || (existing && existing.committed !== null)) return;
        partitions.set(key, { topic, partition, committed, ...log });
      };
      // Kafka answers an offset fetch with every partition of the topics a group committed to.
      const committedTopics = new Set([...(live?.commits.keys() ?? [])].map(topicOf));
      for (const topic of committedTopics) {
        const count = this.topics.get(topic)?.length ?? 0;
        for (let p = 0; p < count; p++) {
          add(`${topic}#${p}`, live?.commits.get(`${topic}#${p}`) ?? null);
        }
      }
      for (const key of also.get(groupId) ?? []) add(key, null);
      for (const m of live?.members ?? []) {
        for (const [topic, parts] of Object.entries(m.assignment)) {
          for (const p of parts) add(`${topic}#${p}`, null);
        }
      }
      if (!live && partitions.size === 0) continue;
      groups.push({
        groupId,
        state: live?.state ?? 'Dead',
        members: live?.members ?? [],
        partitions: [...partitions.values()],
      });
    }
    return { observedAt, groups, unreadable, adminCalls: 2 + groups.length };
  }
}

const topicOf = (key: string) => key.slice(0, key.lastIndexOf('#'));
