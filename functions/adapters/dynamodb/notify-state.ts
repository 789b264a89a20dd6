import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { NotedStore } from '../../core/audit-notifier.js';
import type { StreamCounts } from '../../core/audit-notify-rules.js';
import type { IncidentStore, StoredIncident } from '../../core/group-notifier.js';
import type { GroupStatus, Incident } from '../../core/notify-rules.js';
import { dynamoDbUnavailable } from './client.js';
import { versionedDelete, versionedPut } from './conditional.js';
import { readAll } from './read-all.js';

/**
 * Open incidents live in the reconcile reports table under one partition key of their own, sort
 * keys `group#<id>` (as report-store.ts's index of reported groups): one query reads them all, and
 * a real group cannot collide, its sort keys never start with `group#`. Only groups with an open
 * incident have an item; it is deleted when the incident closes or the group is forgotten.
 */
const INCIDENTS = '~notify-incidents';

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
    async save(group: string, incident: Incident, version: number) {
      const item = { group: INCIDENTS, sk: `group#${group}`, ...incident };
      const at = { tableName, keyName: 'sk', version, item };
      return (await versionedPut(client, at, `storing the incident of group ${group}`)) !== false;
    },
    remove(group: string, version: number) {
      const key = { group: INCIDENTS, sk: `group#${group}` };
      const at = { tableName, keyName: 'sk', version, key };
      return versionedDelete(client, at, `removing the incident of group ${group}`);
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
    async save(topic, streams, version) {
      const item = { auditId: notedId(topic), topic, streams: JSON.stringify([...streams]) };
      const at = { tableName, keyName: 'auditId', version, item };
      return (await versionedPut(client, at, `storing the notified counts of ${topic}`)) !== false;
    },
  };
}
