import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { inject } from 'vitest';
import { ledgerShardKey } from '../../functions/core/publish/ledger-layout.js';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import type { DynamoDbCall, DynamoDbProxy } from './dynamodb-proxy.js';
import { testKafka } from './kafka.js';
import { headerText } from './publish-client.js';
import { uniqueName } from './unique-name.js';

// What transactional tests read back on the real broker and dynalite: the records a
// read_committed or read_uncommitted consumer sees, the ledger item as stored, and the ledger
// writes the DynamoDB fault proxy picks by their transaction mark.

export interface Seen {
  readonly value: string;
  readonly seq: string | undefined;
  readonly session: string | undefined;
  readonly offset: string;
}

/** Every record of `topic` a consumer reading `isolation` sees, up to a marker sent now. */
export async function seen(topic: string, isolation: 'read_committed' | 'read_uncommitted') {
  const kafka = testKafka('tally-test-txn-world-reader');
  const marker = uniqueName('marker');
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await producer.send({ topic, messages: [{ value: marker }] });
  await producer.disconnect();
  const consumer = kafka.consumer({
    groupId: uniqueName('txn-world-reader'),
    readUncommitted: isolation === 'read_uncommitted',
    maxWaitTimeInMs: 100,
  });
  const records: Seen[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const bound = setTimeout(
        () => reject(new Error(`${isolation}: no marker after 60 s (a transaction left open?)`)),
        60_000,
      );
      consumer
        .run({
          eachMessage: async ({ message }) => {
            const value = message.value?.toString() ?? '';
            if (value === marker) {
              clearTimeout(bound);
              resolve();
            } else if (!value.startsWith('test-marker-')) {
              records.push({
                value,
                seq: headerText(message.headers, 'tally.seq'),
                session: headerText(message.headers, 'tally.session'),
                offset: message.offset,
              });
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return records;
}

/** The ledger item of the block starting at `seq` of `stream`, read directly (not via Tally). */
export async function ledgerItem(table: string, stream: string, seq: number) {
  const client = DynamoDBDocumentClient.from(localDynamoDbClient(inject('dynamodbEndpoint')));
  try {
    const { Item } = await client.send(
      new GetCommand({
        TableName: table,
        Key: { stream: ledgerShardKey(stream, seq), seq },
        ConsistentRead: true,
      }),
    );
    return Item;
  } finally {
    client.destroy();
  }
}

export const txnOf = (item: Record<string, unknown> | undefined) =>
  typeof item?.txn === 'string' ? (JSON.parse(item.txn) as Record<string, unknown>) : undefined;

/** A PutItem on `table` whose block carries a transaction mark in one of `states`. */
export const ledgerPut =
  (table: string, ...states: string[]) =>
  (call: DynamoDbCall): boolean => {
    if (call.operation !== 'PutItem' || call.table !== table) return false;
    const txn = (call.input.Item as Record<string, { S?: string }> | undefined)?.txn?.S;
    return txn !== undefined && states.includes((JSON.parse(txn) as { state: string }).state);
  };

/** The PREPARED mark's offsets of the last PREPARED write the proxy saw on `table`. */
export function preparedOffsets(proxy: DynamoDbProxy, table: string) {
  const prepared = proxy.calls.filter(ledgerPut(table, 'PREPARED')).at(-1);
  const txn = (prepared?.input.Item as Record<string, { S: string }> | undefined)?.txn?.S;
  if (txn === undefined) throw new Error('no PREPARED write was seen');
  return (JSON.parse(txn) as { offsets: Array<{ seq: number; partition: number; offset: string }> })
    .offsets;
}

/** Faults `match`'s calls (each attempt of the SDK's) while `work` runs only. */
export async function whileFaulted<T>(
  proxy: DynamoDbProxy,
  fault: 'stall' | 'lose-answer',
  match: (call: DynamoDbCall) => boolean,
  work: () => Promise<T>,
): Promise<T> {
  let on = true;
  proxy.inject(fault, (call) => on && match(call), 1000);
  try {
    return await work();
  } finally {
    on = false;
  }
}

/** Resolves once the clock is past `at` (a request's deadline, so its key's lock has ended). */
export async function untilPast(at: number) {
  const wait = at - Date.now() + 100;
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
