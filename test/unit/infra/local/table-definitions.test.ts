import { describe, expect, it } from 'vitest';
import {
  createTableInput,
  loadTableDefinitions,
  localTableName,
} from '../../../../infra/local/table-definitions.js';

describe('table definitions from infra/resources/tables.yml', () => {
  it('reads every DynamoDB table with its keys and TTL attribute', () => {
    const tables = loadTableDefinitions();
    const ledger = tables.find((table) => table.logicalId === 'LedgerTable');
    expect(ledger?.keySchema).toEqual([
      { AttributeName: 'stream', KeyType: 'HASH' },
      { AttributeName: 'seq', KeyType: 'RANGE' },
    ]);
    expect(tables.find((t) => t.logicalId === 'ReservationsTable')?.timeToLiveAttribute).toBe(
      'expiresAt',
    );
  });

  it('ignores resources that are not tables', () => {
    const source = `
Resources:
  Queue: { Type: AWS::SQS::Queue, Properties: {} }
  ThingsTable:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: \${self:custom.tablePrefix}things
      AttributeDefinitions: [{ AttributeName: id, AttributeType: S }]
      KeySchema: [{ AttributeName: id, KeyType: HASH }]
`;
    expect(loadTableDefinitions(source).map((t) => t.logicalId)).toEqual(['ThingsTable']);
  });

  it('names the field that is wrong', () => {
    const source = `
Resources:
  ThingsTable:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: \${self:custom.tablePrefix}things
      AttributeDefinitions: [{ AttributeName: id, AttributeType: X }]
      KeySchema: [{ AttributeName: id, KeyType: HASH }]
`;
    expect(() => loadTableDefinitions(source)).toThrow(
      'Resources.ThingsTable.Properties.AttributeDefinitions[0].AttributeType: must be one of S, N, B, got X',
    );
    expect(() => loadTableDefinitions('Resources: []')).toThrow('Resources: must be a mapping');
  });

  it('names local tables as serverless.yml does for a prefix', () => {
    const ledger = loadTableDefinitions().find((t) => t.logicalId === 'LedgerTable');
    expect(ledger && localTableName('kafka-tally-local-', ledger)).toBe('kafka-tally-local-ledger');
    const bad = `
Resources:
  ThingsTable:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: things
      AttributeDefinitions: [{ AttributeName: id, AttributeType: S }]
      KeySchema: [{ AttributeName: id, KeyType: HASH }]
`;
    expect(() => loadTableDefinitions(bad)).toThrow(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a Serverless variable, not a template
      'Resources.ThingsTable.Properties.TableName: must be ${self:custom.tablePrefix}<name>, got things',
    );
  });

  it('creates on-demand tables with the declared keys', () => {
    const [table] = loadTableDefinitions();
    expect(table && createTableInput(table, 'x')).toMatchObject({
      TableName: 'x',
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: table?.keySchema,
      AttributeDefinitions: table?.attributeDefinitions,
    });
  });
});
