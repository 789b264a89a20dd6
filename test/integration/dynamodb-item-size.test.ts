import {
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteTableCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import { uniqueName } from '../helpers/unique-name.js';

// DynamoDB's item limit is 400 KB: 409,600 bytes of attribute names and values, strings counted
// in UTF-8. The local API (dynalite, measured as DynamoDB measures) must refuse what it refuses.
const LIMIT = 409_600;
// Item { pk: "k", v: <value> }: the names and the key take 2 + 1 + 1 bytes.
const OVERHEAD = 4;

describe('DynamoDB item size limit on the local API', () => {
  const client = localDynamoDbClient(inject('dynamodbEndpoint'));
  const TableName = uniqueName('item-size');

  beforeAll(async () => {
    await client.send(
      new CreateTableCommand({
        TableName,
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  });

  afterAll(async () => {
    await client.send(new DeleteTableCommand({ TableName }));
    client.destroy();
  });

  const put = (value: string) =>
    client.send(new PutItemCommand({ TableName, Item: { pk: { S: 'k' }, v: { S: value } } }));
  const update = (value: string) =>
    client.send(
      new UpdateItemCommand({
        TableName,
        Key: { pk: { S: 'k' } },
        UpdateExpression: 'SET v = :v',
        ExpressionAttributeValues: { ':v': { S: value } },
      }),
    );
  const batchPut = (value: string) =>
    client.send(
      new BatchWriteItemCommand({
        RequestItems: {
          [TableName]: [{ PutRequest: { Item: { pk: { S: 'k' }, v: { S: value } } } }],
        },
      }),
    );
  const refusal = (message: string) =>
    expect.objectContaining({ name: 'ValidationException', message });
  // Exactly LIMIT bytes, in ASCII and in '€' (3 UTF-8 bytes, 1 UTF-16 unit each).
  const ascii = 'a'.repeat(LIMIT - OVERHEAD);
  const euros = `${'€'.repeat(Math.floor((LIMIT - OVERHEAD) / 3))}${'a'.repeat((LIMIT - OVERHEAD) % 3)}`;

  it('PutItem: accepts an item of exactly 400 KB and refuses one byte more', async () => {
    await expect(put(ascii)).resolves.toBeDefined();
    await expect(put(`${ascii}a`)).rejects.toEqual(
      refusal('Item size has exceeded the maximum allowed size'),
    );
  });

  it('UpdateItem: accepts an update to exactly 400 KB and refuses one byte more', async () => {
    await expect(update(ascii)).resolves.toBeDefined();
    await expect(update(`${ascii}a`)).rejects.toEqual(
      refusal('Item size to update has exceeded the maximum allowed size'),
    );
  });

  it('counts strings in UTF-8 bytes, as DynamoDB does (dynalite alone counts UTF-16 units)', async () => {
    expect(Buffer.byteLength(euros)).toBe(LIMIT - OVERHEAD);
    await expect(put(euros)).resolves.toBeDefined();
    await expect(put(`${euros}a`)).rejects.toEqual(
      refusal('Item size has exceeded the maximum allowed size'),
    );
    await expect(update(`${euros}a`)).rejects.toEqual(
      refusal('Item size to update has exceeded the maximum allowed size'),
    );
    await expect(batchPut(`${euros}a`)).rejects.toEqual(
      refusal('Item size has exceeded the maximum allowed size'),
    );
    // Attribute names count in UTF-8 too.
    await expect(
      client.send(
        new PutItemCommand({
          TableName,
          Item: { pk: { S: 'k' }, ['é'.repeat(200)]: { S: 'a'.repeat(LIMIT - OVERHEAD - 300) } },
        }),
      ),
    ).rejects.toEqual(refusal('Item size has exceeded the maximum allowed size'));
  });
});
