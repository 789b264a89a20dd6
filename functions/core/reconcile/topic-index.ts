// The index of which groups read which topic (adapters/dynamodb/report-store.ts keeps it beside
// the reports), so Burrow's topic routes read a topic's own readers, not every group's report.
// A group's entry in the index of reported groups records the topics it read when last written;
// a run writes the group's topic entries only when that set changed (or the entry has none yet:
// written before this index), so a steady cluster adds no writes per run.

/** The topics a report's partitions read, sorted, each once. */
export function topicsRead(report: {
  readonly partitions: readonly { topic: string }[];
}): string[] {
  return [...new Set(report.partitions.map((p) => p.topic))].sort();
}

/** Whether the sorted topic lists `a` and `b` hold the same topics. */
export function sameTopics(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((topic, i) => topic === b[i]);
}

/**
 * What moves in the topic index when a group's recorded topics change from `was` to `now`:
 * every topic of `now` is written again (so an item two overlapping runs left out comes back
 * with the group's next change), those of `was` no longer read are removed.
 */
export function topicMoves(
  was: readonly string[],
  now: readonly string[],
): { readonly put: readonly string[]; readonly remove: readonly string[] } {
  const reading = new Set(now);
  return { put: now, remove: was.filter((topic) => !reading.has(topic)) };
}
