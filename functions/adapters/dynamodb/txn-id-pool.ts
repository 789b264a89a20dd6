import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TakenLease, TxnIdLease, TxnIdPoolStore } from '../../core/publish/txn-id-pool.js';
import { conditional } from './conditional.js';
import { readAll } from './read-all.js';

// The transactional id pool (core/publish/txn-id-pool.ts), one item per id ever leased: pk
// `poolId` (the pool's id prefix), sk `txnId`, with its holder, generation and lease end. Every
// write is one conditional UpdateItem (no transactions). No TTL: an expired lease is the
// record of the id's last holder and generation, which the next take-over bumps; DynamoDB's TTL
// deletes up to days late, and a deleted item would restart the generation at 1.

const leaseOf = (item: Record<string, unknown>): TxnIdLease => ({
  txnId: String(item.txnId),
  holder: String(item.holder),
  generation: Number(item.generation),
  leaseUntil: Number(item.leaseUntil),
});

export function createDynamoDbTxnIdPool(
  client: DynamoDBDocumentClient,
  options: { readonly tableName: string; readonly pool: string },
): TxnIdPoolStore {
  const { tableName: TableName, pool } = options;
  return {
    async leases() {
      const items = await readAll(
        client,
        {
          query: {
            TableName,
            KeyConditionExpression: 'poolId = :pool',
            ExpressionAttributeValues: { ':pool': pool },
            ConsistentRead: true,
          },
        },
        'reading the transactional id pool',
      );
      return items.map(leaseOf);
    },

    async take(txnId, holder, now, leaseUntil) {
      let stored: Record<string, unknown> | undefined;
      const taken = await conditional(async () => {
        ({ Attributes: stored } = await client.send(
          new UpdateCommand({
            TableName,
            Key: { poolId: pool, txnId },
            UpdateExpression:
              'SET holder = :holder, leaseUntil = :until, generation = if_not_exists(generation, :zero) + :one',
            ConditionExpression: 'attribute_not_exists(txnId) OR leaseUntil < :now',
            ExpressionAttributeValues: {
              ':holder': holder,
              ':until': leaseUntil,
              ':now': now,
              ':zero': 0,
              ':one': 1,
            },
            ReturnValues: 'ALL_NEW',
          }),
        ));
      }, `leasing the transactional id ${txnId}`);
      if (!taken || stored === undefined) return undefined;
      const lease = leaseOf(stored);
      // Generation 1: nobody held the id before. Any later one takes over an expired lease.
      return { lease, mustFence: lease.generation > 1 } satisfies TakenLease;
    },

    async renew(lease, leaseUntil) {
      const renewed = await conditional(
        () =>
          client.send(
            new UpdateCommand({
              TableName,
              Key: { poolId: pool, txnId: lease.txnId },
              UpdateExpression: 'SET leaseUntil = :until',
              ConditionExpression: 'holder = :holder AND generation = :generation',
              ExpressionAttributeValues: {
                ':holder': lease.holder,
                ':generation': lease.generation,
                ':until': leaseUntil,
              },
            }),
          ),
        `renewing the lease on the transactional id ${lease.txnId}`,
      );
      return renewed ? { ...lease, leaseUntil } : undefined;
    },
  };
}
