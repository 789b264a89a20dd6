import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoDbUnavailable } from './client.js';
import { readAll } from './read-all.js';

// A list too long for one DynamoDB item (400 KB), kept under one group as a head item `sk` and
// chunks `sk#00000`, `sk#00001`… of CHUNK rows each (a row here is at most ~300 bytes: a topic
// name is at most 249). The head is written last: a list whose head can be read is whole.

const CHUNK = 1000;

export interface Chunked {
  readonly head: Record<string, unknown>;
  readonly rows: unknown[];
}

export function createChunkedItems(client: DynamoDBDocumentClient, tableName: string) {
  const put = async (item: Record<string, unknown>) => {
    try {
      await client.send(new PutCommand({ TableName: tableName, Item: item }));
    } catch (error) {
      throw dynamoDbUnavailable(`storing ${String(item.sk)} of group ${String(item.group)}`, error);
    }
  };
  return {
    /** Stores `rows` in chunks, then `head`; with `expiresAt` (epoch seconds) all of them expire. */
    async put(
      group: string,
      sk: string,
      head: Record<string, unknown>,
      rows: readonly unknown[],
      expiresAt?: number,
    ): Promise<void> {
      const expiry = expiresAt === undefined ? {} : { expiresAt };
      const chunks = Math.ceil(rows.length / CHUNK);
      for (let i = 0; i < chunks; i++) {
        const body = JSON.stringify(rows.slice(i * CHUNK, (i + 1) * CHUNK));
        await put({ group, sk: `${sk}#${String(i).padStart(5, '0')}`, body, ...expiry });
      }
      await put({ ...head, group, sk, chunks, count: rows.length, ...expiry });
    },

    /** The head and every row in order, or undefined when there is no head. */
    async get(group: string, sk: string): Promise<Chunked | undefined> {
      const items = await readAll(
        client,
        {
          query: {
            TableName: tableName,
            KeyConditionExpression: '#group = :group AND begins_with(sk, :sk)',
            ExpressionAttributeNames: { '#group': 'group' },
            ExpressionAttributeValues: { ':group': group, ':sk': sk },
            ConsistentRead: true,
          },
        },
        `reading ${sk} of group ${group}`,
      );
      const head = items.find((item) => item.sk === sk);
      if (!head) return undefined;
      // Sort keys come back in order: the chunks follow the head, by their padded index.
      const rows = items
        .filter((item) => String(item.sk).startsWith(`${sk}#`))
        .flatMap((item) => JSON.parse(String(item.body)) as unknown[]);
      return { head, rows };
    },
  };
}
