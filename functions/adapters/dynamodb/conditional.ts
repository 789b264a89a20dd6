import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DeleteCommandInput,
  type DynamoDBDocumentClient,
  PutCommand,
} from '@aws-sdk/lib-dynamodb';
import { dynamoDbUnavailable } from './client.js';

/**
 * Runs one conditional write or delete: true when it happened, false when its condition kept
 * the stored item (another run got there first); anything else is a dependency failure.
 */
export async function conditional(work: () => Promise<unknown>, doing: string): Promise<boolean> {
  try {
    await work();
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw dynamoDbUnavailable(doing, error);
  }
}

/**
 * The condition of a write over the version read: the stored `version` is still the one read,
 * or, for version 0, no item is stored yet (`keyName`: one of the key's attributes).
 */
export function overVersion(version: number, keyName: string) {
  return version === 0
    ? { ConditionExpression: `attribute_not_exists(${keyName})` }
    : {
        ConditionExpression: 'version = :version',
        ExpressionAttributeValues: { ':version': version },
      };
}

export interface VersionedItem {
  readonly tableName: string;
  /** One of the key's attributes, for the "not stored yet" condition of version 0. */
  readonly keyName: string;
  /** The version read (0: none stored). */
  readonly version: number;
}

/**
 * Puts `item` as version + 1, only over the version read (optimistic locking: of two runs that
 * read the same version, one writes). The item it replaced (undefined: there was none), or false
 * when another run wrote first and the stored item was kept.
 */
export async function versionedPut(
  client: DynamoDBDocumentClient,
  at: VersionedItem & { readonly item: Record<string, unknown> },
  doing: string,
): Promise<{ readonly replaced: Record<string, unknown> | undefined } | false> {
  let replaced: Record<string, unknown> | undefined;
  const written = await conditional(async () => {
    ({ Attributes: replaced } = await client.send(
      new PutCommand({
        TableName: at.tableName,
        Item: { ...at.item, version: at.version + 1 },
        ...overVersion(at.version, at.keyName),
        ReturnValues: 'ALL_OLD',
      }),
    ));
  }, doing);
  return written && { replaced };
}

/** One conditional DeleteItem: true when it deleted, false when its condition kept the item. */
const conditionalDelete = (
  client: DynamoDBDocumentClient,
  input: DeleteCommandInput,
  doing: string,
): Promise<boolean> => conditional(() => client.send(new DeleteCommand(input)), doing);

/** Deletes the item at `key` only if it is still at the version read; false when it was not. */
export function versionedDelete(
  client: DynamoDBDocumentClient,
  at: VersionedItem & { readonly key: Record<string, unknown> },
  doing: string,
): Promise<boolean> {
  const { tableName: TableName, key: Key, version, keyName } = at;
  return conditionalDelete(client, { TableName, Key, ...overVersion(version, keyName) }, doing);
}

/** Deletes the item at `key` only if its `attribute` still holds `value`; false when it did not. */
export function deleteIfStill(
  client: DynamoDBDocumentClient,
  at: {
    readonly tableName: string;
    readonly key: Record<string, unknown>;
    readonly attribute: string;
    readonly value: unknown;
  },
  doing: string,
): Promise<boolean> {
  return conditionalDelete(
    client,
    {
      TableName: at.tableName,
      Key: at.key,
      ConditionExpression: '#still = :still',
      ExpressionAttributeNames: { '#still': at.attribute },
      ExpressionAttributeValues: { ':still': at.value },
    },
    doing,
  );
}
