import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteItemCommand, type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { loadTableDefinitions } from './table-definitions.js';

// DynamoDB's TTL, emulated for the local stack: dynalite stores a table's TimeToLiveSpecification
// nowhere and deletes nothing. The sweeper scans every table infra/resources/tables.yml gives a
// TTL and deletes the items whose TTL attribute (epoch seconds) is at or below its clock, each
// only while that attribute is unchanged (a rewrite since the scan keeps its item), as AWS does.
// Its clock is the wall clock moved by an offset a test (or TALLY_LOCAL_CLOCK_OFFSET_SECONDS)
// sets, so months of expiry take one sweep. AWS deletes typically within days of the TTL, not
// at it: readers never rely on the sweep (adapters/dynamodb/ledger.ts treats an item past its
// TTL as gone), so a sweep that runs late only leaves more to read past.

export interface TtlSweeper {
  /** The sweeper's time (epoch ms): the wall clock plus the offset. */
  now(): number;
  /** Moves the sweeper's clock on by `ms`. */
  advance(ms: number): void;
  /** One pass over every TTL table: the items deleted. */
  sweep(): Promise<number>;
  /** Stops the periodic sweep (when started with an interval). */
  stop(): void;
}

export interface TtlSweeperOptions {
  readonly client: DynamoDBClient;
  /** Logical id (infra/resources/tables.yml) → table name, as createLocalTables returns. */
  readonly tables: Readonly<Record<string, string>>;
  readonly offsetMs?: number;
  /** Sweeps every this many ms; none when unset (tests call `sweep`). */
  readonly intervalMs?: number;
  readonly log?: (line: string) => void;
}

export function createTtlSweeper(options: TtlSweeperOptions): TtlSweeper {
  const { client, tables, log } = options;
  let offsetMs = options.offsetMs ?? 0;
  const swept = loadTableDefinitions()
    .filter((table) => table.timeToLiveAttribute !== undefined && tables[table.logicalId])
    .map((table) => ({
      name: tables[table.logicalId] as string,
      attribute: table.timeToLiveAttribute as string,
      keys: table.keySchema.map((key) => key.AttributeName as string),
    }));

  async function sweepTable(table: (typeof swept)[number], nowSeconds: number) {
    let deleted = 0;
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await client.send(
        new ScanCommand({
          TableName: table.name,
          FilterExpression: '#ttl <= :now',
          ExpressionAttributeNames: { '#ttl': table.attribute },
          ExpressionAttributeValues: { ':now': { N: String(nowSeconds) } },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        const ttl = item[table.attribute];
        if (ttl?.N === undefined) continue;
        try {
          await client.send(
            new DeleteItemCommand({
              TableName: table.name,
              Key: Object.fromEntries(table.keys.map((k) => [k, item[k] as AttributeValue])),
              ConditionExpression: '#ttl = :ttl',
              ExpressionAttributeNames: { '#ttl': table.attribute },
              ExpressionAttributeValues: { ':ttl': ttl },
            }),
          );
          deleted++;
        } catch (error) {
          if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
        }
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return deleted;
  }

  const sweeper: TtlSweeper = {
    now: () => Date.now() + offsetMs,
    advance(ms) {
      offsetMs += ms;
    },
    async sweep() {
      const nowSeconds = Math.floor(sweeper.now() / 1000);
      let deleted = 0;
      for (const table of swept) deleted += await sweepTable(table, nowSeconds);
      return deleted;
    },
    stop: () => clearInterval(timer),
  };
  let running = false;
  const timer =
    options.intervalMs === undefined
      ? undefined
      : setInterval(() => {
          if (running) return;
          running = true;
          sweeper
            .sweep()
            .then((deleted) => {
              if (deleted > 0) log?.(`ttl sweeper: deleted ${deleted} expired item(s)`);
            })
            .catch((error: unknown) => log?.(`ttl sweeper: ${(error as Error).message}`))
            .finally(() => {
              running = false;
            });
        }, options.intervalMs);
  timer?.unref();
  return sweeper;
}
