import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * The real client, counting the items every Scan and Query hands back (of `tables` only, when
 * named): what an adapter reads, measured around it rather than guessed from its code.
 */
export function countingClient(documents: DynamoDBDocumentClient, tables?: readonly string[]) {
  const read = { items: 0 };
  const client = new Proxy(documents, {
    get(target, name, receiver) {
      if (name !== 'send') return Reflect.get(target, name, receiver);
      return async (command: Parameters<DynamoDBDocumentClient['send']>[0]) => {
        const out = (await target.send(command)) as { Items?: unknown[] };
        const { TableName } = command.input as { TableName?: string };
        if (tables === undefined || (TableName !== undefined && tables.includes(TableName)))
          read.items += out.Items?.length ?? 0;
        return out;
      };
    },
  });
  return { client, read };
}
