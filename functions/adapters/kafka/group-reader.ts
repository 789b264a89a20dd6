import { AssignerProtocol, type Kafka } from 'kafkajs';
import { ALL_GROUPS, type GroupScope } from '../../core/reconcile/group-shards.js';
import type {
  ClusterSnapshot,
  GroupMember,
  GroupSnapshot,
  GroupSource,
  PartitionOffsets,
} from '../../core/reconcile/ports.js';
import { DependencyUnavailableError, TallyError } from '../../core/shared/errors.js';
import { forEachBounded } from '../../core/shared/for-each-bounded.js';
import { kafkaFailure } from './client.js';
import { createClusterIdentity } from './cluster-identity.js';
import { isStaleTopicError, lazyAdmin } from './lazy-admin.js';

function kafkaUnavailable(error: unknown): unknown {
  if (error instanceof TallyError) return error;
  return new DependencyUnavailableError(
    `Kafka did not answer while reading consumer groups (${kafkaFailure(error)})`,
    { cause: error },
  );
}

const DESCRIBE_BATCH = 50;
/**
 * Requests in flight at once. The calls are as many as before (one DescribeGroups per 50
 * groups, one OffsetFetch per group: kafkajs has no multi-group OffsetFetch), but a run waits
 * for ~1 / N of their round trips; kept small so a coordinator is not flooded.
 */
const DESCRIBES_IN_FLIGHT = 4;
const OFFSET_FETCHES_IN_FLIGHT = 16;

/** kafkaFailure and Kafka's error type, e.g. `KafkaJSProtocolError GROUP_AUTHORIZATION_FAILED`. */
function failure(error: unknown): string {
  const type = (error as { type?: unknown } | null)?.type;
  return typeof type === 'string' ? `${kafkaFailure(error)} ${type}` : kafkaFailure(error);
}

/** The broker could not be reached or did not answer: asking again per group would only wait. */
function unreachable(error: unknown): boolean {
  for (
    let e = error as { name?: string; cause?: unknown } | undefined;
    e;
    e = e.cause as typeof e
  ) {
    if (/Connection|RequestTimeout|BrokerNotFound/.test(e.name ?? '')) return true;
  }
  return false;
}

/** History keys are `topic#partition`; topic names cannot contain `#`. */
const topicOf = (key: string) => key.slice(0, key.lastIndexOf('#'));
const partitionOf = (key: string) => Number(key.slice(key.lastIndexOf('#') + 1));

function decodeAssignment(raw: Buffer): GroupMember['assignment'] {
  if (raw.length === 0) return {};
  const decoded = AssignerProtocol.MemberAssignment.decode(raw);
  return decoded?.assignment ?? {};
}

/**
 * Reads the truth about consumer groups from Kafka with the admin client, a few requests at a
 * time (DESCRIBES_IN_FLIGHT, OFFSET_FETCHES_IN_FLIGHT). Calls grow linearly:
 * one ListGroups, one Metadata (the topics that exist), one DescribeGroups per 50 groups, one
 * OffsetFetch per group, one ListOffsets per topic involved. A group that cannot be read is named in `unreadable`, not guessed.
 */
export function createGroupSource(kafka: Kafka): GroupSource & {
  groupIds(): Promise<string[]>;
  clusterId(): Promise<string>;
  close(): Promise<void>;
} {
  const connected = lazyAdmin(kafka);

  /**
   * A topic deleted since the admin client last asked about it fails every call of that client:
   * then the read is done once more with a fresh one. What still fails is a dependency failure.
   */
  async function read(
    also: ReadonlyMap<string, ReadonlySet<string>>,
    scope: GroupScope = ALL_GROUPS,
  ): Promise<ClusterSnapshot> {
    try {
      return await readOnce(also, scope);
    } catch (error) {
      if (!isStaleTopicError(error)) throw kafkaUnavailable(error);
      connected.reset();
      return await readOnce(also, scope).catch((again: unknown) => {
        throw kafkaUnavailable(again);
      });
    }
  }

  async function readOnce(
    known: ReadonlyMap<string, ReadonlySet<string>>,
    scope: GroupScope,
  ): Promise<ClusterSnapshot> {
    const also = new Map([...known].filter(([groupId]) => scope.owns(groupId)));
    const client = await connected();
    let adminCalls = 0;
    const call = <T>(work: Promise<T>) => {
      adminCalls++;
      return work;
    };
    const observedAt = Date.now();
    const unreadable: string[] = [];
    const { groups: listed } = await call(client.listGroups());
    // Topics deleted since history mentioned them are left out: asking about one would make it a
    // metadata target of this client, and every later call of the client would fail.
    const existing = new Set(await call(client.listTopics()));
    // One ListGroups answers for every shard; each describes and fetches only its own groups.
    const live = listed.map((g) => g.groupId).filter((groupId) => scope.owns(groupId));
    const descriptions = new Map<string, { state: string; members: GroupMember[] }>();
    // Groups whose description failed are left out of this run: half a group (offsets without
    // members) would read as a group nobody owns.
    const undescribed = new Set<string>();
    const describe = async (batch: string[]) => {
      const { groups } = await call(client.describeGroups(batch));
      for (const group of groups) {
        descriptions.set(group.groupId, {
          state: group.state,
          members: group.members.map((m) => ({
            memberId: m.memberId,
            clientId: m.clientId,
            clientHost: m.clientHost,
            assignment: decodeAssignment(m.memberAssignment),
          })),
        });
      }
    };
    const batches: string[][] = [];
    for (let i = 0; i < live.length; i += DESCRIBE_BATCH) {
      batches.push(live.slice(i, i + DESCRIBE_BATCH));
    }
    await forEachBounded(batches, DESCRIBES_IN_FLIGHT, async (batch) => {
      try {
        await describe(batch);
      } catch (error) {
        if (isStaleTopicError(error)) throw error;
        // Kafka answers per group, but kafkajs fails the whole batch for one group's error (its
        // coordinator not found, a group this principal may not describe). The batch is asked
        // again one group at a time, so only the groups that really fail are unread; not after a
        // timeout or a lost connection, where each would only wait again.
        const perGroup = batch.length > 1 && !unreachable(error);
        // Asked together: kafkajs retries a missing coordinator for seconds, per group.
        const failures = perGroup
          ? await Promise.all(
              batch.map((groupId) =>
                describe([groupId]).then(
                  () => undefined,
                  (one: unknown) => {
                    if (isStaleTopicError(one)) throw one;
                    return [groupId, one] as const;
                  },
                ),
              ),
            )
          : batch.map((groupId) => [groupId, error] as const);
        for (const [groupId, failed] of failures.filter((f) => f !== undefined)) {
          undescribed.add(groupId);
          unreadable.push(`group ${groupId}: describe failed (${failure(failed)})`);
        }
      }
    });
    const groupIds = [...new Set([...descriptions.keys(), ...also.keys()])]
      .filter((groupId) => !undescribed.has(groupId))
      .sort();
    const committed = new Map<
      string,
      Array<{ topic: string; partition: number; offset: number | null }>
    >();
    await forEachBounded(groupIds, OFFSET_FETCHES_IN_FLIGHT, async (groupId) => {
      const known = also.get(groupId);
      const knownTopics =
        known && [...new Set([...known].map(topicOf))].filter((t) => existing.has(t));
      // A group known only from history whose topics are all deleted has nothing left to read.
      if (knownTopics?.length === 0 && !descriptions.has(groupId)) return;
      try {
        const topics = await call(
          knownTopics && !descriptions.has(groupId)
            ? client.fetchOffsets({ groupId, topics: knownTopics })
            : client.fetchOffsets({ groupId }),
        );
        committed.set(
          groupId,
          topics.flatMap(({ topic, partitions }) =>
            partitions.map((p) => ({
              topic,
              partition: p.partition,
              offset: Number(p.offset) < 0 ? null : Number(p.offset),
            })),
          ),
        );
      } catch (error) {
        unreadable.push(`group ${groupId}: offset fetch failed (${failure(error)})`);
      }
    });
    // Topics whose log offsets are needed: committed, assigned or known from history.
    const topics = new Set<string>();
    for (const offsets of committed.values()) for (const o of offsets) topics.add(o.topic);
    for (const d of descriptions.values())
      for (const m of d.members) for (const t of Object.keys(m.assignment)) topics.add(t);
    for (const known of also.values()) for (const key of known) topics.add(topicOf(key));
    const logs = new Map<string, Map<number, { low: number; high: number }>>();
    const readable = [...topics].filter((topic) => existing.has(topic)).sort();
    await forEachBounded(readable, OFFSET_FETCHES_IN_FLIGHT, async (topic) => {
      try {
        const offsets = await call(client.fetchTopicOffsets(topic));
        logs.set(
          topic,
          new Map(offsets.map((o) => [o.partition, { low: Number(o.low), high: Number(o.high) }])),
        );
      } catch (error) {
        unreadable.push(`topic ${topic}: log offsets failed (${failure(error)})`);
      }
    });

    const groups: GroupSnapshot[] = groupIds
      .filter((groupId) => committed.has(groupId) || descriptions.has(groupId))
      .map((groupId) => {
        const description = descriptions.get(groupId);
        const partitions = new Map<string, PartitionOffsets>();
        const add = (topic: string, partition: number, offset: number | null) => {
          const log = logs.get(topic)?.get(partition);
          if (!log) return;
          const key = `${topic}#${partition}`;
          const existing = partitions.get(key);
          if (existing && existing.committed !== null) return;
          partitions.set(key, {
            topic,
            partition,
            committed: offset,
            logStart: log.low,
            logEnd: log.high,
          });
        };
        for (const o of committed.get(groupId) ?? []) add(o.topic, o.partition, o.offset);
        // Partitions with history but no commit now: observed as "no commit" (LOST is judged later).
        for (const key of also.get(groupId) ?? []) add(topicOf(key), partitionOf(key), null);
        for (const m of description?.members ?? []) {
          for (const [topic, parts] of Object.entries(m.assignment))
            for (const p of parts) add(topic, p, null);
        }
        return {
          groupId,
          // Not listed (deleted, or gone empty and expired): Kafka describes it as Dead.
          state: description?.state ?? 'Dead',
          members: description?.members ?? [],
          partitions: [...partitions.values()],
        };
      });
    return { observedAt, groups, unreadable, adminCalls };
  }

  return {
    read,
    /** The ids of the cluster's consumer groups now (one ListGroups). */
    async groupIds() {
      try {
        const { groups } = await (await connected()).listGroups();
        return groups.map((g) => g.groupId);
      } catch (error) {
        throw kafkaUnavailable(error);
      }
    },
    /** Asked once per container: a cluster's id never changes. */
    clusterId: createClusterIdentity(connected),
    close: () => connected.close(),
  };
}
