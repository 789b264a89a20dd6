import type { Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createGroupSource } from '../../../../functions/adapters/kafka/group-reader.js';

// A group known only from history, which Kafka no longer lists (deleted, or empty and expired):
// its state as Kafka names it (DescribeGroups answers Dead for a group it does not have).

function kafkaWith(listed: string[]): Kafka {
  const admin = {
    connect: async () => {},
    disconnect: async () => {},
    listGroups: async () => ({
      groups: listed.map((groupId) => ({ groupId, protocolType: 'consumer' })),
    }),
    listTopics: async () => ['orders'],
    describeGroups: async (ids: string[]) => ({
      groups: ids.map((groupId) => ({ groupId, state: 'Stable', members: [] })),
    }),
    fetchOffsets: async () => [{ topic: 'orders', partitions: [{ partition: 0, offset: '-1' }] }],
    fetchTopicOffsets: async () => [{ partition: 0, offset: '9', low: '0', high: '9' }],
  };
  return { admin: () => admin } as unknown as Kafka;
}

describe('group reader: a group Kafka no longer has', () => {
  it('reads Dead, as Kafka says, not Unknown', async () => {
    const source = createGroupSource(kafkaWith(['live']));
    const snapshot = await source.read(new Map([['gone', new Set(['orders#0'])]]));
    const states = Object.fromEntries(snapshot.groups.map((g) => [g.groupId, g.state]));
    expect(states).toEqual({ gone: 'Dead', live: 'Stable' });
  });
});
