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
import { Deadline } from '../../functions/core/shared/deadline.js';
import type { RecordOutcome } from '../../functions/core/shared/outcomes.js';
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

  it('lands a conditional ledger write only over the version it expects', async () => {
    const ledger = createLedger(DynamoDBDocumentClient.from(client), String(tables.LedgerTable));
    const stream = uniqueName('versions');
    const outcomes = (status: 'UNKNOWN' | 'NOT_SENT', message: string): RecordOutcome[] => [
      { status, message },
    ];
    const block = (o: RecordOutcome[]) => ({
      stream,
      firstSeq: 1,
      topic: 'orders',
      session: 's',
      idempotencyKey: 'k',
      outcomes: o,
    });
    // Nothing there yet: a write expecting no block lands; a second one does not.
    const first = await ledger.write(block(outcomes('UNKNOWN', 'fast path')), undefined, 'absent');
    expect(first).toEqual(expect.any(String));
    expect(
      await ledger.write(block(outcomes('UNKNOWN', 'x')), undefined, 'absent'),
    ).toBeUndefined();
    // Attempt A opens, attempt B opens after it: A's write over its own version is refused.
    const a = await ledger.open(
      block(outcomes('UNKNOWN', 'attempt A')),
      new Deadline(Date.now() + 5_000),
    );
    const b = await ledger.open(
      block(outcomes('UNKNOWN', 'attempt B')),
      new Deadline(Date.now() + 5_000),
    );
    if (a === 'voided' || b === 'voided') throw new Error('not voided: nothing voided this block');
    expect(a.version).not.toBe(b.version);
    const late = await ledger.write(block(outcomes('NOT_SENT', 'A, late')), undefined, a.version);
    expect(late).toBeUndefined();
    const found = await ledger.find(stream, 1);
    expect(found?.outcomes).toEqual(outcomes('UNKNOWN', 'attempt B'));
    expect(found?.version).toBe(b.version);
    // B's own write lands, and the version read back is the one it returned.
    const mine = await ledger.write(block(outcomes('NOT_SENT', 'B')), undefined, b.version);
    expect((await ledger.find(stream, 1))?.version).toBe(mine);
    // A block written before versions existed is read as version '' and replaced over it.
    await client.send(
      new PutItemCommand({
        TableName: tables.LedgerTable,
        Item: {
          stream: { S: `${stream}-old` },
          seq: { N: '1' },
          count: { N: '1' },
          topic: { S: 'orders' },
          session: { S: 's' },
          outcomes: { S: JSON.stringify([['U', 'old']]) },
        },
      }),
    );
    const old = await ledger.find(`${stream}-old`, 1);
    expect(old?.version).toBe('');
    const over = await ledger.write(
      { ...block(outcomes('NOT_SENT', 'settled')), stream: `${stream}-old` },
      undefined,
      '',
    );
    expect(over).toEqual(expect.any(String));
    expect(
      await ledger.write(
        { ...block(outcomes('NOT_SENT', 'again')), stream: `${stream}-old` },
        undefined,
        '',
      ),
    ).toBeUndefined();
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
