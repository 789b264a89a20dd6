import { randomUUID } from 'node:crypto';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
} from '@aws-sdk/lib-dynamodb';
import { orUnavailable } from './client.js';

// Gzipped bytes too large for one DynamoDB item (400 KB), kept as part items
// `<head id>#<token>#<i>` of at most PART_BYTES each, written before the head item that names
// their token (`partsToken`, `parts`). A new token per write: a reader of the head it replaces
// reads its own parts, or finds one gone and reads the head again. Parts are only ever read
// through the head that names them; the parts a new head replaced, or a losing writer's, are
// deleted by the writer (notify-state.ts, audit-store.ts).

/** Gzipped bytes per part item: with its key and names, well under 409,600 bytes. */
export const PART_BYTES = 350 * 1024;

type Item = Record<string, unknown>;

export function createGzipParts(
  client: DynamoDBDocumentClient,
  tableName: string,
  keyName: string,
) {
  const partId = (id: string, token: string, i: number) => `${id}#${token}#${i}`;
  /** The part ids a head names (none for a head holding its bytes itself). */
  const partsOf = (head: Item | undefined): string[] =>
    typeof head?.partsToken === 'string'
      ? Array.from({ length: Number(head.parts) }, (_, i) =>
          partId(String(head[keyName]), String(head.partsToken), i),
        )
      : [];
  return {
    partsOf,
    /** Writes `zipped` as parts of the head `id`; returns the head's attributes naming them. */
    async write(id: string, zipped: Uint8Array, extra: Item, doing: string) {
      const head = { partsToken: randomUUID(), parts: Math.ceil(zipped.length / PART_BYTES) };
      for (let i = 0; i < head.parts; i++) {
        const body = zipped.subarray(i * PART_BYTES, (i + 1) * PART_BYTES);
        const item = { ...extra, [keyName]: partId(id, head.partsToken, i), body };
        await orUnavailable(doing, () =>
          client.send(new PutCommand({ TableName: tableName, Item: item })),
        );
      }
      return head;
    },
    /** The bytes a head names, or undefined when a part is gone (the head was replaced). */
    async read(head: Item, doing: string): Promise<Buffer | undefined> {
      const parts: Uint8Array[] = [];
      for (const id of partsOf(head)) {
        const get = new GetCommand({
          TableName: tableName,
          Key: { [keyName]: id },
          ConsistentRead: true,
        });
        const part = (await orUnavailable(doing, () => client.send(get))).Item;
        if (!(part?.body instanceof Uint8Array)) return undefined;
        parts.push(part.body);
      }
      return Buffer.concat(parts);
    },
    /** Deletes the parts `head` names; a failure leaves parts no head names (only stored). */
    async remove(head: Item | undefined, onError: (id: string, error: Error) => void) {
      for (const id of partsOf(head)) {
        await orUnavailable(`removing ${id}`, () =>
          client.send(new DeleteCommand({ TableName: tableName, Key: { [keyName]: id } })),
        ).catch((error: Error) => onError(id, error));
      }
    },
  };
}
