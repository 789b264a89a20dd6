import { gunzipSync, gzipSync } from 'node:zlib';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
} from '@aws-sdk/lib-dynamodb';
import type { AuditReport, SliceJson } from '../../core/audit/ports.js';
import { CheckpointTooLargeError } from '../../core/audit/retention.js';
import type { CheckpointJson } from '../../core/audit/topic-log.js';
import { ConflictError } from '../../core/shared/errors.js';
import { dynamoDbUnavailable } from './client.js';
import { versionedPut } from './conditional.js';
import { createGzipParts } from './gzip-parts.js';

const KEEP_DAYS = 30;
/**
 * Reports kept per topic at most, whatever their age: 30 days of 15-minute audits (2,880) fit.
 * Their ids live in one index item per topic (~50 bytes each: ~150 KB at the cap).
 */
export const MAX_REPORTS_PER_TOPIC = 3000;
/**
 * DynamoDB's item limit is 400 KB; keep room for the other attributes. The audit keeps its
 * checkpoint far below (folding detail older than its retention horizon): this is the backstop.
 */
export const MAX_CHECKPOINT_BYTES = 380 * 1024;
/** Reports above this are stored gzipped (a report lists at most 100 items of each finding). */
const GZIP_ABOVE = 64 * 1024;

const checkpointId = (topic: string) => `checkpoint#${topic}`;
const indexId = (topic: string) => `reports#${topic}`;
/** Topic names cannot hold `#`: no slice id is a checkpoint's. */
const sliceId = (topic: string, slice: string) => `checkpoint#${topic}#slice#${slice}`;

type IndexEntry = [auditId: string, at: number];

/** The index entries to keep and to drop once `added` is in: at most the cap, none too old. */
export function reportsToKeep(
  entries: readonly IndexEntry[],
  added: IndexEntry,
  now: number,
): { keep: IndexEntry[]; drop: IndexEntry[] } {
  const all = [...entries, added];
  const oldest = now - KEEP_DAYS * 86_400_000;
  const cut = Math.max(
    all.length - MAX_REPORTS_PER_TOPIC,
    all.findIndex(([, at]) => at >= oldest),
  );
  const from = cut < 0 ? all.length - 1 : cut;
  return { keep: all.slice(from), drop: all.slice(0, from) };
}

function encodeReport(report: AuditReport): { report: string } | { reportGzip: Uint8Array } {
  const json = JSON.stringify(report);
  return json.length > GZIP_ABOVE ? { reportGzip: gzipSync(json) } : { report: json };
}

function decodeReport(item: Record<string, unknown> | undefined): AuditReport | undefined {
  if (item?.reportGzip instanceof Uint8Array) {
    return JSON.parse(gunzipSync(item.reportGzip).toString('utf8')) as AuditReport;
  }
  return typeof item?.report === 'string' ? (JSON.parse(item.report) as AuditReport) : undefined;
}

/**
 * Audit reports by id; per topic an index of its report ids, oldest first, by which each save
 * deletes the reports past KEEP_DAYS or MAX_REPORTS_PER_TOPIC (nothing relies on TTL expiry,
 * which DynamoDB may apply days late and the local stack never does); and per topic the audit's
 * checkpoint (gzipped JSON with a version number, written only over the version it was read at,
 * so two audits of one topic at once cannot both save); and the slices fan-out children read.
 */
export function createAuditStore(
  client: DynamoDBDocumentClient,
  tableName: string,
  log: (level: 'warn', message: string, extra?: object) => void = () => {},
) {
  const parts = createGzipParts(client, tableName, 'auditId');
  const getItem = async (auditId: string, doing: string) => {
    try {
      const { Item } = await client.send(
        new GetCommand({ TableName: tableName, Key: { auditId }, ConsistentRead: true }),
      );
      return Item;
    } catch (error) {
      throw dynamoDbUnavailable(doing, error);
    }
  };
  /** Adds a report to its topic's index (a versioned item); returns the entries it let go. */
  const index = async (topic: string, added: IndexEntry, now: number): Promise<IndexEntry[]> => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const item = await getItem(indexId(topic), `reading the report index of ${topic}`);
      const version = Number(item?.version ?? 0);
      const entries =
        typeof item?.entries === 'string' ? (JSON.parse(item.entries) as IndexEntry[]) : [];
      const { keep, drop } = reportsToKeep(entries, added, now);
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              auditId: indexId(topic),
              topic,
              entries: JSON.stringify(keep),
              version: version + 1,
            },
            ConditionExpression: 'attribute_not_exists(auditId) OR version = :version',
            ExpressionAttributeValues: { ':version': version },
          }),
        );
        return drop;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) {
          throw dynamoDbUnavailable(`storing the report index of ${topic}`, error);
        }
      }
    }
    throw new ConflictError(`the report index of ${topic} kept changing: run again`);
  };
  /** Gzipped JSON with a version number, as saveVersioned wrote it (in parts or not). */
  const loadVersioned = async <T>(id: string, what: string) => {
    for (let attempt = 1; attempt <= 3; attempt++) {
      const item = await getItem(id, `reading ${what}`);
      if (item === undefined) return undefined;
      const packed =
        item.state instanceof Uint8Array ? item.state : await parts.read(item, `reading ${what}`);
      // undefined: a part is gone, the head was replaced while read; read the new one.
      if (packed === undefined) continue;
      return {
        state: JSON.parse(gunzipSync(packed).toString('utf8')) as T,
        version: Number(item.version),
      };
    }
    throw new ConflictError(`${what} kept changing while read: run again`);
  };
  /**
   * Writes only over the version read (0: none yet). A state too large for one item is refused
   * (a checkpoint folds then: fold-old.ts), or, `split`, written in parts (gzip-parts.ts).
   */
  const saveVersioned = async (
    id: string,
    topic: string,
    state: object,
    version: number,
    messages: { what: string; conflict: string; split?: boolean },
  ) => {
    const packed = gzipSync(JSON.stringify(state));
    const doing = `storing ${messages.what}`;
    let body: Record<string, unknown> = { state: packed };
    if (packed.length > MAX_CHECKPOINT_BYTES) {
      if (!messages.split)
        throw new CheckpointTooLargeError(topic, packed.length, MAX_CHECKPOINT_BYTES);
      body = await parts.write(id, packed, { topic }, doing);
    }
    const item = { auditId: id, topic, ...body, at: new Date().toISOString() };
    const written = await versionedPut(
      client,
      { tableName, keyName: 'auditId', version, item },
      doing,
    );
    // A write that fails half way may leave parts no head names: never read, only stored.
    await parts.remove(written ? written.replaced : item, (partId, error) =>
      log('warn', 'a stale part of an audit slice stays', { partId, error: error.message }),
    );
    if (!written) throw new ConflictError(messages.conflict);
  };
  return {
    async save(auditId: string, report: AuditReport, now = Date.now()): Promise<void> {
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: { auditId, topic: report.topic, at: report.at, ...encodeReport(report) },
          }),
        );
      } catch (error) {
        throw dynamoDbUnavailable(`storing audit ${auditId}`, error);
      }
      const dropped = await index(report.topic, [auditId, Date.parse(report.at) || now], now);
      for (const [old] of dropped) {
        await client
          .send(new DeleteCommand({ TableName: tableName, Key: { auditId: old } }))
          .catch((error: unknown) => {
            throw dynamoDbUnavailable(`removing audit ${old}`, error);
          });
      }
    },
    async get(auditId: string): Promise<AuditReport | undefined> {
      return decodeReport(await getItem(auditId, `reading audit ${auditId}`));
    },

    async load(topic: string): Promise<{ state: CheckpointJson; version: number } | undefined> {
      return loadVersioned<CheckpointJson>(checkpointId(topic), `the audit checkpoint of ${topic}`);
    },
    async saveCheckpoint(topic: string, state: CheckpointJson, version: number): Promise<void> {
      await saveVersioned(checkpointId(topic), topic, state, version, {
        what: `the audit checkpoint of ${topic}`,
        conflict: `another audit of ${topic} saved its checkpoint first: this run's findings are not kept; run again`,
      });
    },
    /** A fan-out child's slice of a topic (audit-merge.ts), stored as a checkpoint is. */
    async loadSlice(
      topic: string,
      slice: string,
    ): Promise<{ state: SliceJson; version: number } | undefined> {
      return loadVersioned<SliceJson>(sliceId(topic, slice), `audit slice ${slice} of ${topic}`);
    },
    async saveSlice(
      topic: string,
      slice: string,
      state: SliceJson,
      version: number,
    ): Promise<void> {
      await saveVersioned(sliceId(topic, slice), topic, state, version, {
        what: `audit slice ${slice} of ${topic}`,
        conflict: `another child saved audit slice ${slice} of ${topic} first; run again`,
        split: true,
      });
    },
  };
}
