import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, inject } from 'vitest';
import { createLocalTables, localDynamoDbClient } from '../../infra/local/local-tables.js';
import { uniqueName } from './unique-name.js';

/**
 * Tally's tables on the local DynamoDB API for one test file: created before its tests under a
 * unique prefix, deleted after them. `table(id)` names one by its CloudFormation id.
 */
export function localTablesForFile(prefix: string) {
  const client = localDynamoDbClient(inject('dynamodbEndpoint'));
  const documents = DynamoDBDocumentClient.from(client);
  let tables: Record<string, string> = {};
  beforeAll(async () => {
    tables = await createLocalTables(client, `${uniqueName(prefix)}-`);
  });
  afterAll(async () => {
    for (const TableName of Object.values(tables)) {
      await client.send(new DeleteTableCommand({ TableName }));
    }
    client.destroy();
  });
  const table = (id: string) => {
    const name = tables[id];
    if (!name) throw new Error(`no table ${id}`);
    return name;
  };
  return { client, documents, table };
}
