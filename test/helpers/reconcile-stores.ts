import { decodeParts, encodeParts } from '../../functions/adapters/dynamodb/history-codec.js';
import { shardKey } from '../../functions/core/reconcile/group-shards.js';
import type { OffsetObservation } from '../../functions/core/reconcile/offsets/offset-status.js';
import type { PartitionHistory } from '../../functions/core/reconcile/offsets/partition-history.js';
import type {
  HistoryEntry,
  HistoryItem,
  MappingStore,
  OffsetHistory,
  ReportStore,
  StoredMapping,
} from '../../functions/core/reconcile/ports.js';
import {
  createReconciler,
  type ReconcileOptions,
} from '../../functions/core/reconcile/reconciler.js';
import { sameTopics, topicMoves } from '../../functions/core/reconcile/topic-index.js';
import type { FakeCluster } from './fake-cluster.js';

// In-memory stores behind reconcile's ports, with DynamoDB's conditions and ordered sort keys,
// that measure what they hold: items, and bytes as the JSON of each item as the DynamoDB
// adapter writes it (an item must stay under DynamoDB's 400 KB).

type Item = Record<string, unknown>;

/** A table of items by (partition key, sort key), sort keys kept in order per partition key. */
export class MemoryTable {
  private readonly partitions = new Map<string, { keys: string[]; items: Map<string, Item> }>();
  private readonly sizes = new Map<string, number>();
  bytes = 0;
  count = 0;
  maxItemBytes = 0;

  get(pk: string, sk: string): Item | undefined {
    return this.partitions.get(pk)?.items.get(sk);
  }

  put(pk: string, sk: string, item: Item): void {
    let partition = this.partitions.get(pk);
    if (!partition) {
      partition = { keys: [], items: new Map() };
      this.partitions.set(pk, partition);
    }
    if (!partition.items.has(sk)) {
      partition.keys.splice(lowerBound(partition.keys, sk), 0, sk);
      this.count++;
    }
    partition.items.set(sk, item);
    const size = Buffer.byteLength(JSON.stringify(item));
    const id = `${pk}\u0000${sk}`;
    this.bytes += size - (this.sizes.get(id) ?? 0);
    this.sizes.set(id, size);
    this.maxItemBytes = Math.max(this.maxItemBytes, size);
  }

  delete(pk: string, sk: string): boolean {
    const partition = this.partitions.get(pk);
    if (!partition?.items.delete(sk)) return false;
    partition.keys.splice(lowerBound(partition.keys, sk), 1);
    if (partition.keys.length === 0) this.partitions.delete(pk);
    const id = `${pk}\u0000${sk}`;
    this.bytes -= this.sizes.get(id) ?? 0;
    this.sizes.delete(id);
    this.count--;
    return true;
  }

  /** Sort keys of `pk` from `from` to `to` (inclusive), ascending, at most `limit`. */
  range(pk: string, from: string, to: string, limit = Number.POSITIVE_INFINITY): string[] {
    const keys = this.partitions.get(pk)?.keys ?? [];
    const out: string[] = [];
    for (let i = lowerBound(keys, from); i < keys.length && out.length < limit; i++) {
      const key = keys[i] as string;
      if (key > to) break;
      out.push(key);
    }
    return out;
  }

  *all(): Generator<Item> {
    for (const { items } of this.partitions.values()) yield* items.values();
  }
}

function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((keys[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Offset history as the DynamoDB adapter stores it (items of `parts`, legacy items of `window`),
 * counting the writes it is asked for (`writes`: puts and deletes, whether or not they won).
 */
export function memoryHistory(
  table = new MemoryTable(),
): OffsetHistory & { table: MemoryTable; writes: number; putLegacy(entry: HistoryEntry): void } {
  const removeAt = (group: string, sk: string, version: number) => {
    if (table.get(group, sk)?.version !== version) return false;
    return table.delete(group, sk);
  };
  const store = {
    table,
    writes: 0,
    async loadAll() {
      const items: HistoryItem[] = [];
      const legacy: HistoryEntry[] = [];
      for (const item of table.all()) {
        const group = String(item.group);
        const version = Number(item.version);
        if (typeof item.parts === 'string') {
          const partitions = decodeParts(item.parts);
          items.push({
            group,
            id: String(item.partition),
            topic: String(item.topic),
            partitions,
            version,
          });
        } else {
          const window = JSON.parse(String(item.window)) as OffsetObservation[];
          legacy.push({ group, key: String(item.partition), window, version });
        }
      }
      return { items, legacy };
    },
    async loadGroup(group: string) {
      const { items, legacy } = await store.loadAll();
      return {
        items: items.filter((item) => item.group === group),
        legacy: legacy.filter((entry) => entry.group === group),
      };
    },
    async save(item: HistoryItem, partitions: ReadonlyMap<number, PartitionHistory>) {
      store.writes++;
      const stored = table.get(item.group, item.id);
      if ((stored?.version ?? 0) !== item.version) return false;
      table.put(item.group, item.id, {
        group: item.group,
        partition: item.id,
        topic: item.topic,
        parts: encodeParts(partitions),
        version: item.version + 1,
      });
      return true;
    },
    async remove(item: HistoryItem) {
      store.writes++;
      return removeAt(item.group, item.id, item.version);
    },
    async removeLegacy(entry: HistoryEntry) {
      store.writes++;
      return removeAt(entry.group, entry.key, entry.version);
    },
    /** An item of the old per-partition shape, as an earlier version wrote it. */
    putLegacy(entry: HistoryEntry) {
      table.put(entry.group, entry.key, {
        group: entry.group,
        partition: entry.key,
        window: JSON.stringify(entry.window),
        version: entry.version,
      });
    },
  };
  return store;
}

export function memoryMappings(table = new MemoryTable()): MappingStore & { table: MemoryTable } {
  return {
    table,
    async list() {
      return [...table.all()].map(
        ({ pk, sk, lastSeenAt, ...attributes }): StoredMapping => ({
          pk: String(pk),
          sk: String(sk),
          lastSeenAt: Number(lastSeenAt),
          attributes: attributes as Record<string, string | number>,
        }),
      );
    },
    async upsert(m) {
      const stored = table.get(m.pk, m.sk);
      if (stored && Number(stored.lastSeenAt) > m.lastSeenAt) return false;
      table.put(m.pk, m.sk, { ...m.attributes, pk: m.pk, sk: m.sk, lastSeenAt: m.lastSeenAt });
      return true;
    },
    async deleteIfUnchanged(m) {
      if (table.get(m.pk, m.sk)?.lastSeenAt !== m.lastSeenAt) return false;
      return table.delete(m.pk, m.sk);
    },
  };
}

const INDEX = '~reconcile-groups';
const TOPICS = '~reconcile-topics';
const iso = (at: number) => new Date(at).toISOString();

export function memoryReports(table = new MemoryTable()): ReportStore & { table: MemoryTable } {
  const put = (group: string, sk: string, rest: Item) =>
    table.put(group, sk, { group, sk, ...rest });
  const body = (item: Item | undefined) =>
    item ? (JSON.parse(String(item.body)) as object) : undefined;
  return {
    table,
    async saveGroupReport(group, at, report, dated) {
      put(group, `report#${iso(at)}`, { body: JSON.stringify(dated) });
      put(group, 'latest', { at, body: JSON.stringify(report) });
    },
    async saveGroupReports(at, reports) {
      for (const { group, report, dated, topics } of reports) {
        put(group, 'latest', { at, body: JSON.stringify(report) });
        if (dated) put(group, `report#${iso(at)}`, { body: JSON.stringify(dated.body) });
        if (!dated && !topics) continue;
        const marked = dated ? { markedAt: at, digest: dated.digest } : topics?.marked;
        put(INDEX, `group#${group}`, {
          markedAt: marked?.markedAt ?? at,
          ...(marked?.digest !== undefined && { digest: marked.digest }),
          ...(topics && { topics: [...topics.now] }),
        });
        if (!topics || sameTopics(topics.was, topics.now)) continue;
        const moves = topicMoves(topics.was, topics.now);
        for (const topic of moves.put) put(TOPICS, `topic#${topic}#group#${group}`, {});
        for (const topic of moves.remove) table.delete(TOPICS, `topic#${topic}#group#${group}`);
      }
    },
    async latestGroupReport(group) {
      return body(table.get(group, 'latest'));
    },
    async groupReportsSince(group, since) {
      return table
        .range(group, `report#${iso(since)}`, 'report#~')
        .map((sk) => body(table.get(group, sk)) as object);
    },
    async pruneGroupReports(group, before, limit) {
      const old = table.range(group, 'report#', `report#${iso(before - 1)}`, Math.max(0, limit));
      for (const sk of old) table.delete(group, sk);
      return old.length;
    },
    async reportedGroups(range) {
      // As the byShard index would answer: a range's groups only.
      const inRange = (group: string) => {
        const { bucket, hash } = shardKey(group);
        return (range?.buckets ?? []).some(
          (b) => b.bucket === bucket && b.from <= hash && hash <= b.to,
        );
      };
      return new Map(
        table
          .range(INDEX, '', '\uffff')
          .filter((sk) => range === undefined || inRange(sk.slice(6)))
          .map((sk) => {
            const item = table.get(INDEX, sk);
            const digest = typeof item?.digest === 'string' ? { digest: item.digest } : {};
            const topics = Array.isArray(item?.topics) ? { topics: item.topics as string[] } : {};
            return [
              sk.slice(6),
              { markedAt: Number(item?.markedAt), ...digest, ...topics },
            ] as const;
          }),
      );
    },
    async reportedGroupsAfter(after, limit) {
      const ids = table.range(INDEX, 'group#', 'group$').map((sk) => sk.slice(6));
      return ids.filter((id) => after === undefined || id > after).slice(0, limit);
    },
    async reportedTopics() {
      const readers = table.range(TOPICS, 'topic#', 'topic$');
      return [...new Set(readers.map((sk) => sk.slice(6, sk.indexOf('#group#'))))];
    },
    async topicGroups(topic) {
      const from = `topic#${topic}#group#`;
      return table.range(TOPICS, from, `topic#${topic}#group$`).map((sk) => sk.slice(from.length));
    },
    async markReported(group, at, digest, topics) {
      put(INDEX, `group#${group}`, {
        markedAt: at,
        ...(digest !== undefined && { digest }),
        ...(topics !== undefined && { topics: [...topics] }),
      });
    },
    async forgetGroup(group, markedAt, before) {
      const latest = table.get(group, 'latest');
      if (latest === undefined || Number(latest.at) < before) table.delete(group, 'latest');
      const entry = table.get(INDEX, `group#${group}`);
      if (entry?.markedAt === markedAt) {
        table.delete(INDEX, `group#${group}`);
        for (const topic of (entry.topics as string[] | undefined) ?? []) {
          table.delete(TOPICS, `topic#${topic}#group#${group}`);
        }
      }
    },
  };
}

/**
 * A reconciler over `cluster` read at `now()`, with fresh memory stores: returned with it so a
 * test can look at what they hold.
 */
export function memoryReconciler(
  cluster: FakeCluster,
  now: () => number,
  options: ReconcileOptions,
) {
  const stores = { history: memoryHistory(), mappings: memoryMappings(), reports: memoryReports() };
  const reconciler = createReconciler({ source: cluster.source(now), ...stores }, options);
  return { reconciler, ...stores };
}
