import { DeleteCommand, type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { orUnavailable } from './client.js';
import { readAll } from './read-all.js';

// A list too long for one DynamoDB item (400 KB), kept under one group as a head item `sk` and
// chunks `sk#00000`, `sk#00001`… of at most CHUNK_ROWS rows and CHUNK_BYTES of JSON each (a
// row of a plan is at most ~300 bytes, one of a group report's partitions a few KB: a topic name
// is at most 249). The head is written last and removed first: a list whose head can be read is
// whole.

const CHUNK_ROWS = 1000;
/** JSON bytes per chunk: with its key and names, well under DynamoDB's 409,600 bytes. */
const CHUNK_BYTES = 350 * 1024;

/** `rows` as the JSON bodies of consecutive chunks, each within CHUNK_ROWS and CHUNK_BYTES. */
export function chunkBodies(rows: readonly unknown[]): string[] {
  const bodies: string[] = [];
  let chunk: string[] = [];
  let bytes = 2;
  for (const row of rows) {
    const json = JSON.stringify(row);
    const size = Buffer.byteLength(json) + 1;
    if (chunk.length > 0 && (chunk.length === CHUNK_ROWS || bytes + size > CHUNK_BYTES)) {
      bodies.push(`[${chunk.join(',')}]`);
      chunk = [];
      bytes = 2;
    }
    chunk.push(json);
    bytes += size;
  }
  if (chunk.length > 0) bodies.push(`[${chunk.join(',')}]`);
  return bodies;
}

export interface Chunked {
  readonly head: Record<string, unknown>;
  readonly rows: unknown[];
}

export function createChunkedItems(client: DynamoDBDocumentClient, tableName: string) {
  const attempt = <T>(work: () => Promise<T>, doing: string) => orUnavailable(doing, work);
  const put = (item: Record<string, unknown>) =>
    attempt(
      () => client.send(new PutCommand({ TableName: tableName, Item: item })),
      `storing ${String(item.sk)} of group ${String(item.group)}`,
    );
  /** `group`'s items whose sort keys start with `prefix`, in sort key order. */
  const itemsOf = (group: string, prefix: string, projection?: string) =>
    readAll(
      client,
      {
        query: {
          TableName: tableName,
          KeyConditionExpression: '#group = :group AND begins_with(sk, :sk)',
          ExpressionAttributeNames: { '#group': 'group' },
          ExpressionAttributeValues: { ':group': group, ':sk': prefix },
          ...(projection && { ProjectionExpression: projection }),
          ConsistentRead: true,
        },
      },
      `reading ${prefix} of group ${group}`,
    );
  /** Sort keys (and `savedAt`) of `group`'s items starting with `prefix`, in sort key order. */
  const keysOf = async (group: string, prefix: string) =>
    (await itemsOf(group, prefix, 'sk, savedAt')).map((item) => ({
      sk: String(item.sk),
      savedAt: Number(item.savedAt),
    }));
  const removeKey = (group: string, sk: string) =>
    attempt(
      () => client.send(new DeleteCommand({ TableName: tableName, Key: { group, sk } })),
      `removing ${sk} of group ${group}`,
    );
  return {
    /** Stores `rows` in chunks, then `head`. Nothing expires: owners prune (`heads`, `remove`). */
    async put(
      group: string,
      sk: string,
      head: Record<string, unknown>,
      rows: readonly unknown[],
    ): Promise<void> {
      const bodies = chunkBodies(rows);
      for (const [i, body] of bodies.entries()) {
        await put({ group, sk: `${sk}#${String(i).padStart(5, '0')}`, body });
      }
      await put({ ...head, group, sk, chunks: bodies.length, count: rows.length });
    },

    /**
     * The heads of `group`'s lists whose sort keys start with `prefix` (which ends in `#`), in
     * sort key order, with the `savedAt` their head carries (NaN without one).
     */
    async heads(group: string, prefix: string): Promise<Array<{ sk: string; savedAt: number }>> {
      const all = await keysOf(group, prefix);
      return all.filter((item) => !item.sk.slice(prefix.length).includes('#'));
    },

    /** Removes a list: its head first (so it reads as absent at once), then its chunks. */
    async remove(group: string, sk: string): Promise<void> {
      await removeKey(group, sk);
      for (const chunk of await keysOf(group, `${sk}#`)) await removeKey(group, chunk.sk);
    },

    /** The head and every row in order, or undefined when there is no head. */
    async get(group: string, sk: string): Promise<Chunked | undefined> {
      const items = await itemsOf(group, sk);
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
