import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createDynamoDbTxnIdPool } from '../../functions/adapters/dynamodb/txn-id-pool.js';
import {
  createTxnIdLeaser,
  type TakenLease,
  TxnIdPoolExhausted,
} from '../../functions/core/publish/txn-id-pool.js';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import { localTablesForFile } from '../helpers/local-tables.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 33: transactional ids leased from a DynamoDB pool. Two live holders of one id must be
// impossible: leasers race here with their own DynamoDB clients (connections of their own), all
// requests in flight at the emulator at once, and the stored leases are checked afterwards.

const LEASE_MS = 60_000;
const { table } = localTablesForFile('txn-ids');
const clients: DynamoDBDocumentClient[] = [];
afterAll(() => {
  for (const client of clients) client.destroy();
});

/** A DynamoDB client of its own: a leaser in another container. */
function ownClient(): DynamoDBDocumentClient {
  const client = DynamoDBDocumentClient.from(localDynamoDbClient(inject('dynamodbEndpoint')));
  clients.push(client);
  return client;
}

function leaserAt(pool: string, holder: string, poolSize: number, now: () => number) {
  const store = createDynamoDbTxnIdPool(ownClient(), { tableName: table('TxnIdsTable'), pool });
  return {
    store,
    leaser: createTxnIdLeaser({
      store,
      idPrefix: pool,
      poolSize,
      holder,
      leaseMs: LEASE_MS,
      skewMs: 1000,
      maxRequestMs: 30_000,
      now,
    }),
  };
}

async function stored(pool: string) {
  const documents = ownClient();
  const { Items = [] } = await documents.send(
    new QueryCommand({
      TableName: table('TxnIdsTable'),
      KeyConditionExpression: 'poolId = :pool',
      ExpressionAttributeValues: { ':pool': pool },
      ConsistentRead: true,
    }),
  );
  return Items;
}

describe('transactional id pool on DynamoDB (dynalite)', () => {
  it('12 containers leasing at once from a pool of 5: 5 distinct ids, 7 told it is exhausted', async () => {
    const pool = uniqueName('pool');
    const leasers = Array.from({ length: 12 }, (_, i) => leaserAt(pool, `c${i}`, 5, Date.now));
    const results = await Promise.allSettled(leasers.map(({ leaser }) => leaser.forRequest()));
    const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(won).toHaveLength(5);
    expect(new Set(won.map((t) => t.lease.txnId)).size).toBe(5);
    expect(won.every((t) => !t.mustFence && t.lease.generation === 1)).toBe(true);
    expect(lost).toHaveLength(7);
    for (const error of lost) expect(error).toBeInstanceOf(TxnIdPoolExhausted);
    const items = await stored(pool);
    expect(items.map((i) => [i.txnId, i.holder]).sort()).toEqual(
      won.map((t) => [t.lease.txnId, t.lease.holder]).sort(),
    );
  });

  it('one id, 8 takers at once, 30 rounds: exactly one takes it each round', async () => {
    const pool = uniqueName('race');
    const stores = Array.from({ length: 8 }, () =>
      createDynamoDbTxnIdPool(ownClient(), { tableName: table('TxnIdsTable'), pool }),
    );
    let now = Date.now();
    for (let round = 1; round <= 30; round++) {
      // Every take-over after the first comes when the last lease has expired.
      now += LEASE_MS + 1;
      const takes = await Promise.all(
        stores.map((store, i) => store.take(`${pool}-0`, `r${round}c${i}`, now, now + LEASE_MS)),
      );
      const winners = takes.filter((t): t is TakenLease => t !== undefined);
      expect(winners, `round ${round}`).toHaveLength(1);
      const [winner] = winners as [TakenLease];
      expect(winner.lease.generation).toBe(round);
      expect(winner.mustFence).toBe(round > 1);
      const [item] = await stored(pool);
      expect(item).toMatchObject({ holder: winner.lease.holder, generation: round });
    }
  });

  it('a lapsed holder renewing while others take over: one live holder, the store agrees', async () => {
    const pool = uniqueName('renew');
    let clock = Date.now();
    const first = leaserAt(pool, 'zombie', 1, () => clock);
    const { lease } = await first.leaser.forRequest();
    for (let round = 1; round <= 10; round++) {
      clock += LEASE_MS + 1; // the holder was frozen past its lease
      const holderNow = (await stored(pool))[0];
      const current = {
        txnId: lease.txnId,
        holder: String(holderNow?.holder),
        generation: Number(holderNow?.generation),
        leaseUntil: Number(holderNow?.leaseUntil),
      };
      const takers = Array.from({ length: 4 }, (_, i) =>
        leaserAt(pool, `t${round}-${i}`, 1, () => clock),
      );
      const [renewed, ...taken] = await Promise.all([
        first.store.renew(current, clock + LEASE_MS),
        ...takers.map(({ store }) => store.take(lease.txnId, 'x', clock, clock + LEASE_MS)),
      ]);
      const live = [renewed, ...taken].filter((t) => t !== undefined);
      expect(live, `round ${round}`).toHaveLength(1);
      const [item] = await stored(pool);
      if (renewed) {
        expect(item).toMatchObject({ holder: current.holder, generation: current.generation });
      } else {
        expect(item).toMatchObject({ holder: 'x', generation: current.generation + 1 });
      }
    }
  });

  it('renews while warm, and a holder taken over while frozen leases another id, told to fence none', async () => {
    const pool = uniqueName('warm');
    let clock = Date.now();
    const a = leaserAt(pool, 'a', 2, () => clock);
    const b = leaserAt(pool, 'b', 2, () => clock);
    const first = await a.leaser.forRequest();
    clock += LEASE_MS - 20_000; // within reach of the longest request: renewed, the same id
    const again = await a.leaser.forRequest();
    expect(again.lease.txnId).toBe(first.lease.txnId);
    expect(again.lease.leaseUntil).toBe(clock + LEASE_MS);
    clock += LEASE_MS + 1; // a was frozen: its lease expired, and b takes that very id over
    const bTakes = await b.store.take(first.lease.txnId, 'b', clock, clock + LEASE_MS);
    expect(bTakes).toMatchObject({ mustFence: true, lease: { generation: 2 } });
    const thawed = await a.leaser.forRequest();
    expect(thawed.lease.txnId).not.toBe(first.lease.txnId);
    expect(thawed).toMatchObject({ mustFence: false, lease: { holder: 'a', generation: 1 } });
  });
});
