import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { createTableInput, loadTableDefinitions, localTableName } from './table-definitions.js';

/** A client for a local DynamoDB API (dynalite, DynamoDB Local): any credentials will do. */
export function localDynamoDbClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: process.env.AWS_REGION ?? 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 2,
  });
}

async function waitUntilActive(client: DynamoDBClient, tableName: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    if (Date.now() > deadline) {
      throw new Error(`table ${tableName} still ${Table?.TableStatus} after 30 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function enableTimeToLive(client: DynamoDBClient, tableName: string, attribute: string) {
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: attribute, Enabled: true },
      }),
    );
  } catch (error) {
    // dynalite has no UpdateTimeToLive; locally nothing expires, which no test relies on.
    if (!(error instanceof Error && error.name === 'UnknownOperationException')) throw error;
  }
}

/**
 * Creates every table of infra/resources/tables.yml as `<prefix><name>` (existing tables are
 * kept) and returns logical id → table name.
 */
export async function createLocalTables(
  client: DynamoDBClient,
  prefix: string,
): Promise<Record<string, string>> {
  const names: Record<string, string> = {};
  for (const table of loadTableDefinitions()) {
    const tableName = localTableName(prefix, table);
    try {
      await client.send(new CreateTableCommand(createTableInput(table, tableName)));
    } catch (error) {
      if (!(error instanceof ResourceInUseException)) throw error;
    }
    await waitUntilActive(client, tableName);
    if (table.timeToLiveAttribute !== undefined) {
      await enableTimeToLive(client, tableName, table.timeToLiveAttribute);
    }
    names[table.logicalId] = tableName;
  }
  return names;
}

/**
 * The environment our functions read their table names from, for tables created here:
 * logical id `OffsetHistoryTable` → `TALLY_OFFSET_HISTORY_TABLE` (as serverless.yml sets them).
 */
export function tableEnvironment(tables: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(tables).map(([logicalId, name]) => [
      `TALLY_${logicalId.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}`,
      name,
    ]),
  );
}
