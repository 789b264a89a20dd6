import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createMappingStore } from '../../functions/adapters/dynamodb/mapping-store.js';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import { usePublishEnv } from '../helpers/publish-env.js';

// Seed 002: a slow client re-wrote its mapping just before a late delete removed it. With
// versioned conditional writes the delete, based on an older view, cannot remove the newer one.
describe('mapping store: a late delete never removes a fresh write', () => {
  const client = localDynamoDbClient(inject('dynamodbEndpoint'));
  const documents = DynamoDBDocumentClient.from(client);
  let table: string;
  beforeAll(async () => {
    table = (await usePublishEnv()).TALLY_MAPPINGS_TABLE as string;
  });
  afterAll(() => client.destroy());

  it('keeps the mapping written between a reconcile run reading it and deleting it', async () => {
    const store = createMappingStore(documents, table);
    const key = { pk: 'client#10.0.0.7#billing-1', sk: 'group#billing' };
    const stale = { ...key, attributes: { groupId: 'billing', memberId: 'm-1' }, lastSeenAt: 1000 };
    expect(await store.upsert(stale)).toBe(true);

    // Run A reads the store and decides the member is gone…
    const seenByA = (await store.list()).find((m) => m.pk === key.pk && m.sk === key.sk);
    expect(seenByA?.lastSeenAt).toBe(1000);
    // …meanwhile the client comes back and its mapping is written afresh…
    const fresh = { ...key, attributes: { groupId: 'billing', memberId: 'm-2' }, lastSeenAt: 5000 };
    expect(await store.upsert(fresh)).toBe(true);
    // …and A's delete, based on what it read, arrives late.
    expect(await store.deleteIfUnchanged(seenByA as NonNullable<typeof seenByA>)).toBe(false);

    const { Item } = await documents.send(new GetCommand({ TableName: table, Key: key }));
    expect(Item).toMatchObject({ memberId: 'm-2', lastSeenAt: 5000 });
    // An older view cannot overwrite it either; the current view can remove it.
    expect(await store.upsert({ ...stale, lastSeenAt: 2000 })).toBe(false);
    expect(await store.deleteIfUnchanged(fresh)).toBe(true);
    expect(
      (await documents.send(new GetCommand({ TableName: table, Key: key }))).Item,
    ).toBeUndefined();
  });
});
