import type { BucketCount } from '../receipts/receipts-input.js';
import { addCount, emptyCounts, type GroupCounts } from './counted-view.js';
import type { AuditPorts, AuditRequest } from './ports.js';
import { bucketOf, type TopicLog } from './topic-log.js';

/**
 * Reads each group's count-only receipts of the topic. With a receipts port that reads by write
 * time, only the posts written after the checkpoint's `upTo` are read (the first time, or for a
 * checkpoint written before counts were carried, every one); those written up to `upTo` now (the
 * run's start less the lag) are folded into the checkpoint, the later ones counted in this run
 * only: they are read again next run, with any that land late beside them (as readReceipts does).
 * Resolves with what was read and not folded, per group (CountedView.reported adds the rest).
 */
export async function readCounts(
  receipts: AuditPorts['receipts'],
  state: TopicLog,
  request: Pick<AuditRequest, 'topic' | 'groups' | 'bucketMs'>,
  upTo: number,
): Promise<Map<string, GroupCounts>> {
  const { topic, bucketMs } = request;
  const view = state.counted;
  view.keepOnly(request.groups);
  const add = (into: GroupCounts, buckets: readonly BucketCount[]) => {
    for (const b of buckets)
      addCount(into, bucketOf(Date.parse(b.start), bucketMs), b.count, view.foldedBefore);
  };
  const read = new Map<string, GroupCounts>();
  const since = receipts.countsSince?.bind(receipts);
  for (const group of request.groups) {
    const late = emptyCounts();
    read.set(group, late);
    if (since === undefined) {
      add(late, await receipts.counts(group, topic));
      continue;
    }
    const held = view.get(group);
    const folded = held?.counts ?? emptyCounts();
    const foldUpTo = Math.max(upTo, held?.upTo ?? Number.NEGATIVE_INFINITY);
    let any = held !== undefined;
    await since(group, topic, held?.upTo, (buckets, writtenAt) => {
      const fold = writtenAt <= foldUpTo;
      any ||= fold;
      add(fold ? folded : late, buckets);
    });
    // A group with nothing folded yet is not held: the next run reads its posts from the start.
    if (any) view.set(group, foldUpTo, folded);
  }
  return read;
}
