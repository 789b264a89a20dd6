import { readFileSync } from 'node:fs';
import type {
  AttributeDefinition,
  CreateTableCommandInput,
  GlobalSecondaryIndex,
  KeySchemaElement,
} from '@aws-sdk/client-dynamodb';
import { parse } from 'yaml';

const TABLES_FILE = new URL('../resources/tables.yml', import.meta.url);
// biome-ignore lint/suspicious/noTemplateCurlyInString: a Serverless variable, not a template
const PREFIX_VARIABLE = '${self:custom.tablePrefix}';

/** A table as CloudFormation declares it in infra/resources/tables.yml. */
export interface TableDefinition {
  readonly logicalId: string;
  /** TableName without serverless.yml's `${self:custom.tablePrefix}`. */
  readonly nameSuffix: string;
  readonly attributeDefinitions: AttributeDefinition[];
  readonly keySchema: KeySchemaElement[];
  readonly timeToLiveAttribute: string | undefined;
  readonly globalSecondaryIndexes: GlobalSecondaryIndex[];
}

function fail(where: string, what: string): never {
  throw new Error(`infra/resources/tables.yml: ${where}: ${what}`);
}

function record(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(where, 'must be a mapping');
  }
  return value as Record<string, unknown>;
}

function text(value: unknown, where: string, allowed?: readonly string[]): string {
  if (typeof value !== 'string' || value.length === 0) fail(where, 'must be a non-empty string');
  if (allowed !== undefined && !allowed.includes(value)) {
    fail(where, `must be one of ${allowed.join(', ')}, got ${value}`);
  }
  return value;
}

function list(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value) || value.length === 0) fail(where, 'must be a non-empty list');
  return value;
}

function parseTable(logicalId: string, resource: unknown): TableDefinition {
  const where = `Resources.${logicalId}`;
  const properties = record(record(resource, where).Properties, `${where}.Properties`);
  const attributeDefinitions = list(
    properties.AttributeDefinitions,
    `${where}.Properties.AttributeDefinitions`,
  ).map((item, i) => {
    const at = `${where}.Properties.AttributeDefinitions[${i}]`;
    const attribute = record(item, at);
    return {
      AttributeName: text(attribute.AttributeName, `${at}.AttributeName`),
      AttributeType: text(attribute.AttributeType, `${at}.AttributeType`, ['S', 'N', 'B']) as
        | 'S'
        | 'N'
        | 'B',
    };
  });
  const keySchema = parseKeySchema(properties.KeySchema, `${where}.Properties.KeySchema`);
  const indexes = properties.GlobalSecondaryIndexes;
  const globalSecondaryIndexes =
    indexes === undefined
      ? []
      : list(indexes, `${where}.Properties.GlobalSecondaryIndexes`).map((item, i) => {
          const at = `${where}.Properties.GlobalSecondaryIndexes[${i}]`;
          const index = record(item, at);
          const projection = record(index.Projection, `${at}.Projection`);
          return {
            IndexName: text(index.IndexName, `${at}.IndexName`),
            KeySchema: parseKeySchema(index.KeySchema, `${at}.KeySchema`),
            Projection: {
              ProjectionType: text(projection.ProjectionType, `${at}.Projection.ProjectionType`, [
                'KEYS_ONLY',
                'ALL',
              ]) as 'KEYS_ONLY' | 'ALL',
            },
          };
        });
  const tableName = text(properties.TableName, `${where}.Properties.TableName`);
  if (!tableName.startsWith(PREFIX_VARIABLE) || tableName.length === PREFIX_VARIABLE.length) {
    fail(`${where}.Properties.TableName`, `must be ${PREFIX_VARIABLE}<name>, got ${tableName}`);
  }
  const ttl = properties.TimeToLiveSpecification;
  const timeToLiveAttribute =
    ttl === undefined
      ? undefined
      : text(
          record(ttl, `${where}.Properties.TimeToLiveSpecification`).AttributeName,
          `${where}.Properties.TimeToLiveSpecification.AttributeName`,
        );
  return {
    logicalId,
    nameSuffix: tableName.slice(PREFIX_VARIABLE.length),
    attributeDefinitions,
    keySchema,
    timeToLiveAttribute,
    globalSecondaryIndexes,
  };
}

function parseKeySchema(value: unknown, where: string): KeySchemaElement[] {
  return list(value, where).map((item, i) => {
    const at = `${where}[${i}]`;
    const key = record(item, at);
    return {
      AttributeName: text(key.AttributeName, `${at}.AttributeName`),
      KeyType: text(key.KeyType, `${at}.KeyType`, ['HASH', 'RANGE']) as 'HASH' | 'RANGE',
    };
  });
}

/** Reads every AWS::DynamoDB::Table from infra/resources/tables.yml. */
export function loadTableDefinitions(source: string = readFileSync(TABLES_FILE, 'utf8')) {
  const resources = record(record(parse(source), 'document').Resources, 'Resources');
  return Object.entries(resources)
    .filter(([, resource]) => record(resource, 'resource').Type === 'AWS::DynamoDB::Table')
    .map(([logicalId, resource]) => parseTable(logicalId, resource));
}

/**
 * The name serverless.yml gives a table, for a prefix: `kafka-tally-local-` + `ledger`, as
 * `${self:custom.tablePrefix}ledger` is for stage "local".
 */
export function localTableName(prefix: string, table: TableDefinition): string {
  return prefix + table.nameSuffix;
}

export function createTableInput(
  table: TableDefinition,
  tableName: string,
): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: table.attributeDefinitions,
    KeySchema: table.keySchema,
    ...(table.globalSecondaryIndexes.length > 0 && {
      GlobalSecondaryIndexes: table.globalSecondaryIndexes,
    }),
  };
}
