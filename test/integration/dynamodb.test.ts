import {
  ConditionalCheckFailedException,
  DeleteTableCommand,
  DescribeTableCommand,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createLedger } from '../../functions/adapters/dynamodb/ledger.js';
import type { RecordOutcome } from '../../functions/core/outcomes.js';
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

  it('keeps a ledger block of the largest batch (10,000 outcomes) in one item under 400 KB', async () => {
    const ledger = createLedger(DynamoDBDocumentClient.from(client), tables.LedgerTable as string);
    const session = 'f3c1d2a4-5b6c-4d7e-8f90-a1b2c3d4e5f6';
    const inFlight: RecordOutcome = {
      status: 'UNKNOWN',
      message: `sent by session ${session}, no answer recorded`,
    };
    const block = {
      stream: uniqueName('big-block'),
      firstSeq: 1,
      topic: 'orders',
      session,
      idempotencyKey: 'k',
      outcomes: Array.from({ length: 10_000 }, () => inFlight),
    };
    // ~590 KB as JSON text: DynamoDB refuses such an item, so it is stored gzipped.
    expect(JSON.stringify(block.outcomes).length).toBeGreaterThan(400 * 1024);
    await ledger.write(block);
    expect((await ledger.find(block.stream, 10_000))?.outcomes).toEqual(block.outcomes);
    // Rewritten with the outcomes, as after the send: mixed, and read back the same.
    const settled = block.outcomes.map(
      (outcome, i): RecordOutcome =>
        i % 3 === 0
          ? { status: 'ACKED', partition: i % 7, offset: String(1_000_000 + i) }
          : i % 3 === 1
            ? { status: 'NOT_SENT', message: 'the request deadline came before the send' }
            : outcome,
    );
    await ledger.write({ ...block, outcomes: settled });
    const blocks: RecordOutcome[][] = [];
    await ledger.forEachBlock(block.stream, (found) => {
      blocks.push([...found.outcomes]);
    });
    expect(blocks).toEqual([settled]);
  });

  it('lists the blocks written or rewritten since a time, each read whole', async () => {
    const ledger = createLedger(DynamoDBDocumentClient.from(client), String(tables.LedgerTable));
    const stream = 'orders';
    const block = (firstSeq: number, outcomes: RecordOutcome[]) => ({
      stream,
      firstSeq,
      topic: 'orders',
      session: 's-1',
      idempotencyKey: undefined,
      outcomes,
    });
    const unknown: RecordOutcome = { status: 'UNKNOWN', message: 'no answer in time' };
    const acked: RecordOutcome = { status: 'ACKED', partition: 0, offset: '7' };
    for (let first = 1; first <= 250; first += 2)
      await ledger.write(block(first, [unknown, unknown]));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const since = Date.now();
    await ledger.write(block(3, [acked, acked])); // rewritten
    await ledger.write(block(251, [acked])); // new
    const changed: Array<[number, string]> = [];
    await ledger.forEachChangedBlock?.(stream, since, (b) => {
      changed.push([b.firstSeq, b.outcomes.map((o) => o.status).join()]);
    });
    expect(changed.sort((a, b) => a[0] - b[0])).toEqual([
      [3, 'ACKED,ACKED'],
      [251, 'ACKED'],
    ]);
    // From the start: every block (more than one BatchGetItem's 100 keys).
    let all = 0;
    await ledger.forEachChangedBlock?.(stream, 0, () => {
      all++;
    });
    expect(all).toBe(126);
  });
});
