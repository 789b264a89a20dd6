import { randomUUID } from 'node:crypto';
import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { forEachBounded } from '../../core/shared/for-each-bounded.js';
import { batchPut } from './batch-put.js';
import { orUnavailable } from './client.js';
import { deleteIfStill } from './conditional.js';
import { readAll } from './read-all.js';

// Which reported groups read which topic, in the reports table beside the reports
// (core/reconcile/topic-index.ts says when it moves). Two partitions of their own, whose sort
// keys no group's items use (`latest`, `report#…`, `restore#…`, `plan#…`):
// - `~reconcile-topics`, sort key `topic#<topic>#group#<group>`: one item per topic a group reads.
//   A Kafka topic name has no `#` ([A-Za-z0-9._-]), so one topic's readers are one key range.
// - `~reconcile-topic-list`, sort key `topic#<topic>`: one item per topic read by some group, so
//   the topic list reads one item per topic, however many groups read it. It is put after its
//   readers' items and removed only when a consistent read finds no reader left, by a delete
//   conditional on the `token` read before that look: a reader added meanwhile has put the item
//   again with a new token (after its own item), so the delete fails or the put follows it.

const READERS = '~reconcile-topics';
const LIST = '~reconcile-topic-list';
/** Kafka's legal topic names: anything else names no topic there is. */
const TOPIC_NAME = /^[A-Za-z0-9._-]{1,249}$/;
/** Topics released at once. */
const PARALLEL = 8;

const readersOf = (topic: string) => `topic#${topic}#group#`;
const readerKey = (topic: string, group: string) => ({
  group: READERS,
  sk: `${readersOf(topic)}${group}`,
});

export function createTopicIndex(client: DynamoDBDocumentClient, tableName: string) {
  const attempt = <T>(work: () => Promise<T>, doing: string) => orUnavailable(doing, work);
  /** A query of one topic's readers' keys (consistent: the release decides on it). */
  const readers = (topic: string) => ({
    TableName: tableName,
    KeyConditionExpression: '#group = :group AND sk BETWEEN :from AND :to',
    ExpressionAttributeNames: { '#group': 'group' },
    ExpressionAttributeValues: {
      ':group': READERS,
      ':from': readersOf(topic),
      ':to': `topic#${topic}#group$`,
    },
    ProjectionExpression: 'sk',
    ConsistentRead: true,
  });
  /** Removes `topic` from the list unless some group still reads it (see above). */
  const release = async (topic: string) => {
    const key = { group: LIST, sk: `topic#${topic}` };
    const doing = `releasing topic ${topic} from the topic index`;
    const { Item: head } = await attempt(
      () => client.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true })),
      doing,
    );
    if (head === undefined) return;
    const left = await attempt(
      () => client.send(new QueryCommand({ ...readers(topic), Limit: 1 })),
      doing,
    );
    if ((left.Items ?? []).length > 0) return;
    await deleteIfStill(client, { tableName, key, attribute: 'token', value: head.token }, doing);
  };
  return {
    /** `group`'s items for `topics` (key only), to put or delete with the run's reports. */
    readerKeys: (group: string, topics: readonly string[]) =>
      topics.map((topic) => readerKey(topic, group)),
    /**
     * After the readers' items are stored and deleted: the list holds every topic of `read`
     * (a new token each), and loses each of `dropped` no group reads any longer.
     */
    async settle(read: ReadonlySet<string>, dropped: ReadonlySet<string>) {
      const heads = [...read].map((topic) => ({
        group: LIST,
        sk: `topic#${topic}`,
        token: randomUUID(),
      }));
      await batchPut(client, tableName, heads, 'storing the topic list');
      const released = [...dropped].filter((topic) => !read.has(topic));
      await forEachBounded(released, PARALLEL, release);
    },
    /** The groups reading `topic`: one key range, its readers' keys only. */
    async groups(topic: string): Promise<string[]> {
      if (!TOPIC_NAME.test(topic)) return [];
      const items = await readAll(
        client,
        { query: readers(topic) },
        `reading the readers of topic ${topic}`,
      );
      return items.map((item) => String(item.sk).slice(readersOf(topic).length));
    },
    /** Every topic some group reads: one item per topic. */
    async topics(): Promise<string[]> {
      const items = await readAll(
        client,
        {
          query: {
            TableName: tableName,
            KeyConditionExpression: '#group = :group AND sk BETWEEN :from AND :to',
            ExpressionAttributeNames: { '#group': 'group' },
            ExpressionAttributeValues: { ':group': LIST, ':from': 'topic#', ':to': 'topic$' },
            ProjectionExpression: 'sk',
          },
        },
        'reading the topic list',
      );
      return items.map((item) => String(item.sk).slice(6));
    },
  };
}
