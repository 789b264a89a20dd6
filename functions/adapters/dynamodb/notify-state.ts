import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
} from '@aws-sdk/lib-dynamodb';
import type { NotedStore } from '../../core/audit-notifier.js';
import type { StreamCounts } from '../../core/audit-notify-rules.js';
import type { IncidentStore, StoredIncident } from '../../core/group-notifier.js';
import type { GroupStatus, Incident } from '../../core/notify-rules.js';
import { dynamoDbUnavailable } from './client.js';
import { conditional } from './conditional.js';
import { readAll } from './read-all.js';

/**
 * Open incidents live in the reconcile reports table under one partition key of their own, sort
 * keys `group#<id>` (as report-store.ts's index of reported groups): one query reads them all, and
 * a real group cannot collide, its sort keys never start with `group#`. Only groups with an open
 * incident have an item; it is deleted when the incident closes or the group is forgotten.
 */
const INCIDENTS = '~notify-incidents';

/** Each write happens only over the version read (0: the item must not exist). */
const overVersion = (version: number, key: string) =>
  version === 0
    ? { ConditionExpression: `attribute_not_exists(${key})` }
    : {
        ConditionExpression: 'version = :version',
        ExpressionAttributeValues: { ':version': version },
      };

export function createIncidentStore(
  client: DynamoDBDocumentClient,
  tableName: string,
): IncidentStore {
  return {
    async load() {
      const items = await readAll(
        client,
        {
          query: {
            TableName: tableName,
            KeyConditionExpression: '#group = :group AND sk BETWEEN :from AND :to',
            ExpressionAttributeNames: { '#group': 'group' },
            // '$' follows '#': every `group#<id>` sorts before `group$`.
            ExpressionAttributeValues: { ':group': INCIDENTS, ':from': 'group#', ':to': 'group$' },
            ConsistentRead: true,
          },
        },
        'reading the open notification incidents',
      );
      return new Map<string, StoredIncident>(
        items.map((item) => [
          String(item.sk).slice(6),
          {
            version: Number(item.version),
            incident: {
              id: String(item.id),
              start: Number(item.start),
              status: String(item.status) as GroupStatus,
              notifiedAt: Number(item.notifiedAt),
            },
          },
        ]),
      );
    },
    save(group: string, incident: Incident, version: number) {
      return conditional(
        () =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: { group: INCIDENTS, sk: `group#${group}`, ...incident, version: version + 1 },
              ...overVersion(version, 'sk'),
            }),
          ),
        `storing the incident of group ${group}`,
      );
    },
    remove(group: string, version: number) {
      return conditional(
        () =>
          client.send(
            new DeleteCommand({
              TableName: tableName,
              Key: { group: INCIDENTS, sk: `group#${group}` },
              ...overVersion(version, 'sk'),
            }),
          ),
        `removing the incident of group ${group}`,
      );
    },
  };
}

/** Per topic one item in the audits table: the counts last notified per stream with findings. */
const notedId = (topic: string) => `notified#${topic}`;

export function createNotedStore(client: DynamoDBDocumentClient, tableName: string): NotedStore {
  return {
    async load(topic) {
      let item: Record<string, unknown> | undefined;
      try {
        ({ Item: item } = await client.send(
          new GetCommand({
            TableName: tableName,
            Key: { auditId: notedId(topic) },
            ConsistentRead: true,
          }),
        ));
      } catch (error) {
        throw dynamoDbUnavailable(`reading the notified counts of ${topic}`, error);
      }
      const streams =
        typeof item?.streams === 'string'
          ? (JSON.parse(item.streams) as Array<[string, StreamCounts]>)
          : [];
      return { streams: new Map(streams), version: Number(item?.version ?? 0) };
    },
    save(topic, streams, version) {
      return conditional(
        () =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: {
                auditId: notedId(topic),
                topic,
                streams: JSON.stringify([...streams]),
                version: version + 1,
              },
              ...overVersion(version, 'auditId'),
            }),
          ),
        `storing the notified counts of ${topic}`,
      );
    },
  };
}
