import { Kafka, logLevel, type SeekEntry } from 'kafkajs';
import { inject } from 'vitest';

/**
 * A kafkajs client for the test stack's broker. kafkajs logs retried, expected broker answers
 * at ERROR level; failures surface as rejected promises, so its log stays off.
 */
export function testKafka(clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers: inject('kafkaBrokers').split(','),
    logLevel: logLevel.NOTHING,
  });
}

/**
 * Sets an empty group's committed offsets the way kafkajs's admin.setOffsets does (a member of the
 * group joins, seeks, which commits, and leaves at its first fetch), in ~0.1 s instead of ~5 s:
 * that member pauses the topic, and a paused member sleeps maxWaitTimeInMs (kafkajs's default 5 s,
 * which admin.setOffsets gives no way to set) before its first fetch. A group with members is
 * refused, as admin.setOffsets refuses it.
 */
export async function setOffsets(
  entry: { groupId: string; topic: string; partitions: SeekEntry[] },
  kafka = testKafka('tally-test-set-offsets'),
): Promise<void> {
  // On a fresh or loaded broker the group's coordinator may not be settled yet ("This is not the
  // correct coordinator for this group", seen at load ~20): asked again until it is, for 60 s.
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      return await setOffsetsOnce(entry, kafka);
    } catch (error) {
      const e = error as {
        type?: string;
        originalError?: { type?: string };
        cause?: { type?: string };
      };
      const type = e.type ?? e.originalError?.type ?? e.cause?.type ?? '';
      if (!/COORDINATOR|LOAD_IN_PROGRESS/.test(type) || Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

async function setOffsetsOnce(
  { groupId, topic, partitions }: { groupId: string; topic: string; partitions: SeekEntry[] },
  kafka: Kafka,
): Promise<void> {
  const member = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  await member.connect();
  try {
    await member.subscribe({ topic, fromBeginning: true });
    const { state } = await member.describeGroup();
    if (state !== 'Empty' && state !== 'Dead')
      throw new Error(`the group ${groupId} must have no running members, not be ${state}`);
    await new Promise<void>((resolve, reject) => {
      member.on(member.events.FETCH, () => resolve());
      member.run({ eachBatchAutoResolve: false, eachBatch: async () => {} }).catch(reject);
      member.pause([{ topic }]);
      for (const { partition, offset } of partitions) member.seek({ topic, partition, offset });
    });
  } finally {
    await member.disconnect();
  }
}
