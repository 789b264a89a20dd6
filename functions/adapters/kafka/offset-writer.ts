import type { Admin, Kafka } from 'kafkajs';

/** Sets a consumer group's committed offsets (Kafka refuses unless the group is Empty). */
export function createOffsetWriter(kafka: Kafka) {
  let admin: Promise<Admin> | undefined;
  const connected = () => {
    admin ??= (async () => {
      const client = kafka.admin();
      await client.connect();
      return client;
    })().catch((error: unknown) => {
      admin = undefined;
      throw error;
    });
    return admin;
  };
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
