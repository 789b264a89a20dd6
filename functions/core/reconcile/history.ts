import { forEachBounded } from '../shared/for-each-bounded.js';
import type { HeldJudgement } from './offsets/judge-held.js';
import type { OffsetObservation } from './offsets/offset-status.js';
import {
  historyItemId,
  type PartitionHistory,
  type PartitionStep,
  recordHeld,
  stepPartition,
} from './offsets/partition-history.js';
import type { HistoryEntry, HistoryItem, OffsetHistory, StoredHistory } from './ports.js';

// One run's view of the stored offset history: partitions are read and stepped in memory, and
// only the items where something changed are written at the end, a few at a time. An item is
// written whole under its version, so two overlapping runs never interleave its windows.

interface OpenItem {
  readonly stored: HistoryItem;
  readonly next: Map<number, PartitionHistory>;
  dirty: boolean;
}

export interface HistoryFlush {
  /** Items another overlapping run saved first (this run's changes to them are dropped). */
  readonly conflicts: number;
  /** Partitions retired or pruned. */
  readonly removed: number;
}

/** Item writes in flight at once: a run of 1,000 changed groups is ~1,000 / WRITES_IN_FLIGHT round trips. */
const WRITES_IN_FLIGHT = 16;

const at = (key: string) => key.lastIndexOf('#');

/**
 * `heldForMs`: how long a held LOST or OUT_OF_RANGE keeps a partition that nothing else keeps
 * (the retention: offset-holds.ts).
 */
export function openHistory(
  stored: StoredHistory,
  windowSize: number,
  heldForMs = Number.POSITIVE_INFINITY,
) {
  const items = new Map<string, OpenItem>();
  /** group \0 topic#partition → item key (group \0 id). */
  const located = new Map<string, string>();
  const itemKey = (group: string, id: string) => `${group}\u0000${id}`;
  for (const item of stored.items) {
    const key = itemKey(item.group, item.id);
    // An item stored before the byShard index is written again, so fan-out children find it.
    items.set(key, {
      stored: item,
      next: new Map(item.partitions),
      dirty: item.unindexed === true,
    });
    for (const p of item.partitions.keys())
      located.set(`${item.group}\u0000${item.topic}#${p}`, key);
  }
  const itemFor = (group: string, topic: string, partition: number): OpenItem => {
    const found = items.get(located.get(`${group}\u0000${topic}#${partition}`) ?? '');
    if (found) return found;
    const id = historyItemId(topic, partition, windowSize);
    const key = itemKey(group, id);
    let open = items.get(key);
    if (!open) {
      const fresh = { group, id, topic, partitions: new Map(), version: 0 };
      open = { stored: fresh, next: new Map(), dirty: false };
      items.set(key, open);
    }
    located.set(`${group}\u0000${topic}#${partition}`, key);
    return open;
  };
  // An upgrade: windows of the old per-partition items move into items (written this run).
  const legacyOf = new Map<OpenItem, HistoryEntry[]>();
  for (const entry of stored.legacy) {
    const topic = entry.key.slice(0, at(entry.key));
    const partition = Number(entry.key.slice(at(entry.key) + 1));
    const open = itemFor(entry.group, topic, partition);
    if (!open.next.has(partition)) open.next.set(partition, { changes: entry.window });
    open.dirty = true;
    legacyOf.set(open, [...(legacyOf.get(open) ?? []), entry]);
  }
  const seen = new Set<string>();

  return {
    /** group → topic#partition of every stored partition (read even when Kafka forgot it). */
    known(): Map<string, Set<string>> {
      const out = new Map<string, Set<string>>();
      for (const { stored: item, next } of items.values()) {
        const keys = out.get(item.group) ?? new Set<string>();
        for (const p of next.keys()) keys.add(`${item.topic}#${p}`);
        if (keys.size > 0) out.set(item.group, keys);
      }
      return out;
    },

    /**
     * Steps a partition with this run's observation; returns the window to judge and the
     * partition's history as stored before (its held finding, acknowledgement).
     */
    observe(
      group: string,
      topic: string,
      partition: number,
      observation: OffsetObservation,
      owned: boolean,
    ): PartitionStep & { readonly stored: PartitionHistory | undefined } {
      const open = itemFor(group, topic, partition);
      seen.add(`${group}\u0000${topic}#${partition}`);
      const stored = open.next.get(partition);
      const step = stepPartition(stored, observation, owned, windowSize, heldForMs);
      if (step.changed) {
        open.dirty = true;
        if (step.next) open.next.set(partition, step.next);
        else open.next.delete(partition);
      }
      return { ...step, stored };
    },

    /** Records the run's held finding and acknowledgement of a partition still kept. */
    hold(
      group: string,
      topic: string,
      partition: number,
      judged: Pick<HeldJudgement, 'held' | 'ack'>,
    ): void {
      const open = itemFor(group, topic, partition);
      const current = open.next.get(partition);
      if (current === undefined) return;
      const { next, changed } = recordHeld(current, judged);
      if (!changed) return;
      open.next.set(partition, next);
      open.dirty = true;
    },

    /**
     * Partitions this run did not observe: marked gone (one write, when it happens), and
     * deleted once gone since before `before`, at most `budget` of them.
     */
    sweep(now: number, before: number, budget: number): number {
      let removed = 0;
      for (const open of items.values()) {
        for (const [p, history] of open.next) {
          if (seen.has(`${open.stored.group}\u0000${open.stored.topic}#${p}`)) continue;
          if (history.goneAt === undefined) {
            open.next.set(p, { ...history, goneAt: now });
            open.dirty = true;
          } else if (history.goneAt < before && removed < budget) {
            open.next.delete(p);
            open.dirty = true;
            removed++;
          }
        }
      }
      return removed;
    },

    /** Writes the changed items, a few at a time; then removes migrated legacy items. */
    async flush(history: OffsetHistory): Promise<HistoryFlush> {
      let conflicts = 0;
      let removed = 0;
      const dirty = [...items.values()].filter((open) => open.dirty);
      const migrated: HistoryEntry[] = [];
      await forEachBounded(dirty, WRITES_IN_FLIGHT, async (open) => {
        const { stored: item, next } = open;
        const before = item.partitions.size;
        const ok =
          next.size > 0
            ? await history.save(item, next)
            : item.version === 0 || (await history.remove(item));
        if (!ok) {
          conflicts++;
          return;
        }
        removed += Math.max(0, before - next.size);
        migrated.push(...(legacyOf.get(open) ?? []));
      });
      // Only once their windows are saved in an item (another run's, after a conflict, is
      // removed by that run or the next).
      await forEachBounded(migrated, WRITES_IN_FLIGHT, (entry) => history.removeLegacy(entry));
      return { conflicts, removed };
    },
  };
}

/**
 * Stored history as one entry per partition (the restore plan's view), item windows first; a
 * legacy window counts only for a partition no item holds yet. Windows hold changes only, so a
 * last good offset is dated by when it was first seen.
 */
export function historyEntries(stored: StoredHistory): HistoryEntry[] {
  const entries = new Map<string, HistoryEntry>();
  for (const item of stored.items) {
    for (const [p, h] of item.partitions) {
      const key = `${item.topic}#${p}`;
      // A held finding's good reading, once the window no longer shows it, goes first: the
      // restore plan returns the group to it however many runs passed.
      const good = h.held?.good;
      const shown = good && h.changes.some((o) => o.observedAt === good.observedAt);
      entries.set(`${item.group}\u0000${key}`, {
        group: item.group,
        key,
        window: good && !shown ? [good, ...h.changes] : h.changes,
        version: item.version,
      });
    }
  }
  for (const entry of stored.legacy) {
    const id = `${entry.group}\u0000${entry.key}`;
    if (!entries.has(id)) entries.set(id, entry);
  }
  return [...entries.values()];
}

/** One partition whose held finding an admin acknowledged. */
export interface Acknowledged {
  readonly topic: string;
  readonly partition: number;
  readonly status: 'LOST' | 'OUT_OF_RANGE';
  readonly committed: number | null;
}

/**
 * The items of `group` whose held findings are acknowledged at `at`: each held LOST or
 * OUT_OF_RANGE is replaced by an acknowledgement of the commit it is about, so it reads OK
 * until that commit changes (offset-holds.ts). Saved under each item's version.
 */
export function acknowledgeGroup(
  stored: StoredHistory,
  group: string,
  at: number,
): {
  writes: Array<{ item: HistoryItem; partitions: Map<number, PartitionHistory> }>;
  acknowledged: Acknowledged[];
} {
  const writes: Array<{ item: HistoryItem; partitions: Map<number, PartitionHistory> }> = [];
  const acknowledged: Acknowledged[] = [];
  for (const item of stored.items) {
    if (item.group !== group) continue;
    const partitions = new Map(item.partitions);
    for (const [p, history] of item.partitions) {
      if (history.held === undefined) continue;
      const committed = history.changes[history.changes.length - 1]?.committed ?? null;
      const { held, ...rest } = history;
      partitions.set(p, { ...rest, ack: { at, committed } });
      acknowledged.push({ topic: item.topic, partition: p, status: held.status, committed });
    }
    if (acknowledged.some((a) => a.topic === item.topic)) writes.push({ item, partitions });
  }
  acknowledged.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
  return { writes, acknowledged };
}
