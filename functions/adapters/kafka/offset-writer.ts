import type { Kafka } from 'kafkajs';
import { lazyAdmin } from './lazy-admin.js';

/** Sets a consumer group's committed offsets (Kafka refuses unless the group is Empty). */
export function createOffsetWriter(kafka: Kafka) {
  const connected = lazyAdmin(kafka);
  return {
    async groupState(groupId: string): Promise<string> {
      const { groups } = await (await connected()).describeGroups([groupId]);
      return groups[0]?.state ?? 'Unknown';
    },
    async setOffsets(
      groupId: string,
      offsets: ReadonlyArray<{ topic: string; partition: number; offset: number }>,
    ): Promise<void> {
      const client = await connected();
      const byTopic = new Map<string, Array<{ partition: number; offset: string }>>();
      for (const o of offsets) {
        byTopic.set(o.topic, [
          ...(byTopic.get(o.topic) ?? []),
          { partition: o.partition, offset: String(o.offset) },
        ]);
      }
      for (const [topic, partitions] of byTopic)
        await client.setOffsets({ groupId, topic, partitions });
    },
  };
}
