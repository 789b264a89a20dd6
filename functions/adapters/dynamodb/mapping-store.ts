import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mappingGroup } from '../../core/reconcile/mappings.js';
import type { MappingStore } from '../../core/reconcile/ports.js';
import { conditional, deleteIfStill } from './conditional.js';
import { readAll } from './read-all.js';
import { readShard, shardAttributes } from './shard-index.js';

/**
 * Client → group and group → partition → owner mappings. Every write and delete is conditional
 * on `lastSeenAt`, the observation time it is based on, so an older view never overwrites or
 * removes a newer one (seed 002's late delete).
 */
export function createMappingStore(
  client: DynamoDBDocumentClient,
  tableName: string,
): MappingStore {
  return {
    async list(range) {
      const doing = 'reading the mapping store';
      const items = range
        ? await readShard(client, tableName, range, doing)
        : await readAll(client, { scan: { TableName: tableName, ConsistentRead: true } }, doing);
      return items.map(({ pk, sk, lastSeenAt, shardBucket: _, shardHash, ...attributes }) => ({
        pk: String(pk),
        sk: String(sk),
        lastSeenAt: Number(lastSeenAt),
        attributes: attributes as Record<string, string | number>,
        ...(shardHash === undefined && { unindexed: true }),
      }));
    },
    upsert(mapping) {
      return conditional(
        () =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: {
                ...mapping.attributes,
                ...shardAttributes(mappingGroup(mapping)),
                pk: mapping.pk,
                sk: mapping.sk,
                lastSeenAt: mapping.lastSeenAt,
              },
              ConditionExpression: 'attribute_not_exists(pk) OR lastSeenAt <= :seen',
              ExpressionAttributeValues: { ':seen': mapping.lastSeenAt },
            }),
          ),
        `writing mapping ${mapping.pk} ${mapping.sk}`,
      );
    },
    deleteIfUnchanged(mapping) {
      return deleteIfStill(
        client,
        {
          tableName,
          key: { pk: mapping.pk, sk: mapping.sk },
          attribute: 'lastSeenAt',
          value: mapping.lastSeenAt,
        },
        `removing mapping ${mapping.pk} ${mapping.sk}`,
      );
    },
  };
}
