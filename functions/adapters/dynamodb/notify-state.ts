import { gunzipSync, gzipSync } from 'node:zlib';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { StreamCounts } from '../../core/notify/audit-changes.js';
import type { NotedStore } from '../../core/notify/audit-notifier.js';
import type { IncidentStore, StoredIncident } from '../../core/notify/group-notifier.js';
import type { GroupStatus, Incident } from '../../core/notify/rules.js';
import { DependencyUnavailableError } from '../../core/shared/errors.js';
import { orUnavailable } from './client.js';
import { versionedDelete, versionedPut } from './conditional.js';
import { createGzipParts } from './gzip-parts.js';
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

/**
 * Per topic, the counts last notified per stream with findings, in the audits table: one head
 * item `notified#<topic>`, written over the version read. Its counts grow with the streams with
 * findings (~100 bytes each), so past INLINE_BYTES of JSON they are gzipped and split into part
 * items `notified#<topic>#<token>#<i>` (gzip-parts.ts), written before the head that names their
 * token. Every item stays under DynamoDB's 400 KB whatever the number of streams
 * (test/integration/notify-state.test.ts: 20,000 streams).
 */
const notedId = (topic: string) => `notified#${topic}`;
/** Up to this, the counts stay readable JSON in the head (the only form before parts). */
const INLINE_BYTES = 64 * 1024;

export function createNotedStore(
  client: DynamoDBDocumentClient,
  tableName: string,
  log: (level: 'warn', message: string, extra?: object) => void,
): NotedStore {
  const get = async (auditId: string, doing: string) => {
    const read = new GetCommand({ TableName: tableName, Key: { auditId }, ConsistentRead: true });
    return (await orUnavailable(doing, () => client.send(read))).Item;
  };
  const parts = createGzipParts(client, tableName, 'auditId');
  /** The counts' JSON, or undefined when a part is gone (the head was replaced meanwhile). */
  const countsOf = async (head: Record<string, unknown>, doing: string) => {
    if (typeof head.streams === 'string') return head.streams;
    if (parts.partsOf(head).length === 0) return '[]';
    const zipped = await parts.read(head, doing);
    return zipped && gunzipSync(zipped).toString('utf8');
  };
  return {
    async load(topic) {
      const doing = `reading the notified counts of ${topic}`;
      for (let attempt = 1; attempt <= 3; attempt++) {
        const head = await get(notedId(topic), doing);
        if (head === undefined) return { streams: new Map(), version: 0 };
        const json = await countsOf(head, doing);
        if (json !== undefined) {
          const streams = JSON.parse(json) as Array<[string, StreamCounts]>;
          return { streams: new Map(streams), version: Number(head.version) };
        }
      }
      throw new DependencyUnavailableError(`${doing}: they kept changing while read`, {
        retryAfterSeconds: 1,
      });
    },
    async save(topic, streams, version) {
      const doing = `storing the notified counts of ${topic}`;
      const json = JSON.stringify([...streams]);
      const id = notedId(topic);
      const head: Record<string, unknown> =
        Buffer.byteLength(json) <= INLINE_BYTES
          ? { auditId: id, topic, streams: json }
          : { auditId: id, topic, ...(await parts.write(id, gzipSync(json), { topic }, doing)) };
      const at = { tableName, keyName: 'auditId', version, item: head };
      const written = await versionedPut(client, at, doing);
      // A write that fails half way may leave parts no head names: never read, only stored.
      await parts.remove(written ? written.replaced : head, (auditId, error) =>
        log('warn', 'a stale part of notified counts stays', { auditId, error: error.message }),
      );
      return written !== false;
    },
  };
}
