import { lastGoodOffset } from './offsets/offset-status.js';
import type { HistoryEntry } from './ports.js';

// A plan that returns a group to its last good offsets (seed 004: rewound or lost commits), as
// JSON and as kafka-consumer-groups' CSV (`topic,partition,offset`).

export interface RestoreTarget {
  readonly topic: string;
  readonly partition: number;
  /** The newest committed offset seen; null when the commit is gone. */
  readonly current: number | null;
  readonly target: number;
  /** When the target offset was last seen committed. */
  readonly goodAt: string;
}

export interface RestorePlan {
  readonly group: string;
  readonly partitions: readonly RestoreTarget[];
  readonly csv: string;
}

export function planRestore(group: string, entries: readonly HistoryEntry[]): RestorePlan {
  const partitions: RestoreTarget[] = [];
  for (const entry of entries) {
    if (entry.group !== group) continue;
    const good = lastGoodOffset(entry.window);
    const current = entry.window[entry.window.length - 1]?.committed ?? null;
    if (good === undefined || good.offset === current) continue;
    const split = entry.key.lastIndexOf('#');
    partitions.push({
      topic: entry.key.slice(0, split),
      partition: Number(entry.key.slice(split + 1)),
      current,
      target: good.offset,
      goodAt: new Date(good.at).toISOString(),
    });
  }
  partitions.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
  return { group, partitions, csv: planCsv(partitions) };
}

/** kafka-consumer-groups' `--from-file` CSV of a plan's targets. */
export function planCsv(partitions: readonly RestoreTarget[]): string {
  return partitions.map((p) => `${p.topic},${p.partition},${p.target}\n`).join('');
}
