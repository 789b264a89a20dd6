import {
  type DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  type ScanCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { dynamoDbUnavailable } from './client.js';

type Item = Record<string, unknown>;

/** Every item of a Scan or Query, page after page; `doing` names the work in errors. */
export async function readAll(
  client: DynamoDBDocumentClient,
  request: { readonly scan: ScanCommandInput } | { readonly query: QueryCommandInput },
  doing: string,
): Promise<Item[]> {
  const items: Item[] = [];
  await forEachPage(client, request, doing, (page) => {
    items.push(...page);
  });
  return items;
}

/**
 * Hands each page of a Scan or Query to `onPage` in turn, holding one page at a time, until the
 * last page or, after a page, until `done` says so.
 */
export async function forEachPage(
  client: DynamoDBDocumentClient,
  request: { readonly scan: ScanCommandInput } | { readonly query: QueryCommandInput },
  doing: string,
  onPage: (items: Item[]) => void,
  done: () => boolean = () => false,
): Promise<void> {
  let start: Item | undefined;
  do {
    let page: { Items?: Item[] | undefined; LastEvaluatedKey?: Item | undefined };
    try {
      page = await client.send(
        'scan' in request
          ? new ScanCommand({ ...request.scan, ExclusiveStartKey: start })
          : new QueryCommand({ ...request.query, ExclusiveStartKey: start }),
      );
    } catch (error) {
      throw dynamoDbUnavailable(doing, error);
    }
    onPage(page.Items ?? []);
    start = page.LastEvaluatedKey;
  } while (start && !done());
}

/** Every item under one partition key, read consistently. */
export function readPartition(
  client: DynamoDBDocumentClient,
  tableName: string,
  pk: string,
  doing: string,
): Promise<Item[]> {
  return readAll(
    client,
    {
      query: {
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ConsistentRead: true,
      },
    },
    doing,
  );
}
