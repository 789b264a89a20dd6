import {
  ConditionalCheckFailedException,
  DeleteTableCommand,
  DescribeTableCommand,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createLocalTables, localDynamoDbClient } from '../../infra/local/local-tables.js';
import { loadTableDefinitions } from '../../infra/local/table-definitions.js';
import { uniqueName } from '../helpers/unique-name.js';

describe('local DynamoDB API', () => {
  const client = localDynamoDbClient(inject('dynamodbEndpoint'));
  const prefix = `${uniqueName('ddb')}-`;
  let tables: Record<string, string> = {};

  afterAll(async () => {
    for (const tableName of Object.values(tables)) {
      await client.send(new DeleteTableCommand({ TableName: tableName }));
    }
    client.destroy();
  });

  it('creates every table of infra/resources/tables.yml with its key schema', async () => {
    tables = await createLocalTables(client, prefix);
    const definitions = loadTableDefinitions();
    expect(Object.keys(tables).sort()).toEqual(definitions.map((d) => d.logicalId).sort());
    for (const definition of definitions) {
      const name = tables[definition.logicalId];
      const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
      expect(Table?.TableStatus).toBe('ACTIVE');
      expect(Table?.KeySchema).toEqual(definition.keySchema);
    }
    // Creating them again keeps what exists instead of failing.
    expect(await createLocalTables(client, prefix)).toEqual(tables);
  });

  it('refuses a conditional write whose condition fails, and keeps the first item', async () => {
    const TableName = tables.StreamsTable;
    const write = (owner: string) =>
      client.send(
        new PutItemCommand({
          TableName,
          Item: { stream: { S: 'orders' }, owner: { S: owner } },
          ConditionExpression: 'attribute_not_exists(#stream)',
          ExpressionAttributeNames: { '#stream': 'stream' },
        }),
      );
    await write('first');
    const second = write('second');
    await expect(second).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    await expect(second).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    const { Item } = await client.send(
      new GetItemCommand({ TableName, Key: { stream: { S: 'orders' } }, ConsistentRead: true }),
    );
    expect(Item?.owner?.S).toBe('first');
  });
});
