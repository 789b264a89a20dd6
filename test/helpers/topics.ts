import { connect } from 'node:net';
import { type Admin, type ITopicConfig, Kafka, logLevel } from 'kafkajs';

/**
 * Creates topics and waits until every broker of the cluster agrees on them: each names the same
 * leader for every partition, and each leader serves its partition's offsets. kafkajs's own
 * `waitForLeaders` asks one broker and retries only LEADER_NOT_AVAILABLE, while a broker that has
 * not yet applied the new topic answers UNKNOWN_TOPIC_OR_PARTITION ("This server does not host
 * this topic-partition"): faults-leader-move failed in its set-up on it at load ~15, and a later
 * client asking another broker would see no topic at all.
 */
export async function createTopicsEverywhere(
  admin: Admin,
  topics: ITopicConfig[],
  timeoutMs = 60_000,
): Promise<void> {
  await admin.createTopics({ topics, waitForLeaders: false });
  const expected = new Map(
    topics.map((t) => [t.topic, t.replicaAssignment?.length ?? t.numPartitions]),
  );
  await waitUntilBrokersAgree(admin, expected, timeoutMs);
}

type Leaders = Map<string, Map<number, number>>;

/**
 * Waits until every broker's metadata has each topic with its partition count (any count when
 * undefined), each partition led, and all brokers naming the same leaders; then until those
 * leaders answer for their partitions.
 */
export async function waitUntilBrokersAgree(
  admin: Admin,
  expected: ReadonlyMap<string, number | undefined>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const topics = [...expected.keys()];
  const { brokers } = await admin.describeCluster();
  const viewers = brokers.map((b) => brokerViewer(b.host, b.port));
  let last: Array<Leaders | string> = [];
  try {
    for (;;) {
      last = await Promise.all(viewers.map((viewer) => viewer.leaders(topics)));
      if (agree(last, expected) && (await served(admin, topics))) return;
      if (Date.now() > deadline) {
        const views = last.map((v, i) => `${brokers[i]?.nodeId}: ${describe(v)}`).join('; ');
        throw new Error(
          `brokers did not agree on ${topics.join(', ')} in ${timeoutMs} ms: ${views}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await Promise.all(viewers.map((viewer) => viewer.close()));
  }
}

/** An admin client whose every connection goes to one broker: its metadata is that broker's. */
function brokerViewer(host: string, port: number) {
  const admin = new Kafka({
    clientId: 'tally-test-topics',
    brokers: [`${host}:${port}`],
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
    requestTimeout: 5000,
    socketFactory: ({ onConnect }) => connect({ host, port }, onConnect),
  }).admin();
  let connected: Promise<void> | undefined;
  return {
    async leaders(topics: string[]): Promise<Leaders | string> {
      try {
        connected ??= admin.connect();
        await connected;
        const metadata = await admin.fetchTopicMetadata({ topics });
        return new Map(
          metadata.topics.map((t) => [
            t.name,
            new Map(t.partitions.map((p) => [p.partitionId, p.leader])),
          ]),
        );
      } catch (error) {
        connected = undefined;
        return (error as Error).message; // not yet: the broker has not applied the topic
      }
    },
    close: () => admin.disconnect().catch(() => {}),
  };
}

function agree(views: Array<Leaders | string>, expected: ReadonlyMap<string, number | undefined>) {
  const [first] = views;
  if (first === undefined || typeof first === 'string') return false;
  for (const [topic, count] of expected) {
    const partitions = first.get(topic);
    if (partitions === undefined || partitions.size === 0) return false;
    if (count !== undefined && partitions.size !== count) return false;
    if ([...partitions.values()].some((leader) => leader < 0)) return false;
  }
  return views.every((view) => typeof view !== 'string' && describe(view) === describe(first));
}

/** Whether each partition's leader answers for it (a named leader may refuse it for a moment). */
async function served(admin: Admin, topics: string[]): Promise<boolean> {
  try {
    await Promise.all(topics.map((topic) => admin.fetchTopicOffsets(topic)));
    return true;
  } catch {
    return false;
  }
}

function describe(view: Leaders | string): string {
  if (typeof view === 'string') return view;
  return JSON.stringify(
    [...view].map(([topic, p]) => [topic, [...p].sort((a, b) => a[0] - b[0])]).sort(),
  );
}
