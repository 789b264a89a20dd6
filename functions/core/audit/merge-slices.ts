import type { ScanResult, SlicePorts } from './ports.js';
import { type StreamLog, TopicLog } from './topic-log.js';

// A fan-out audit (docs/audit.md): children each read a group of the topic's partitions into
// their own slice, then one merge folds the slices into the topic's checkpoint and compares the
// whole with the ledger as one sequential audit would. Seq counts, buckets, copies and spans
// merge exactly; only the comparison needs every partition, and it runs once, in the merge.
//
// The topic's checkpoint stays the one truth. A slice holds what its child read *on top of* one
// version of it (`basedOn`): from the checkpoint's offsets of its partitions to the slice's own.
// A merge absorbs only slices based on the version it loaded, and saving the checkpoint moves that
// version on, which retires every slice at once: a child that finds its slice based on an older
// version starts again from the checkpoint's offsets. So a slice is never counted twice, a merge
// that fails absorbs nothing, and a child that ran out of time continues from its slice.

/** A child's partitions: a contiguous range of them, named `first-last`. */
export interface PartitionGroup {
  readonly slice: string;
  readonly first: number;
  readonly last: number;
}

/** Partitions 0..count-1 in contiguous groups of at most `perChild`. */
export function partitionGroups(count: number, perChild: number): PartitionGroup[] {
  if (!Number.isSafeInteger(perChild) || perChild < 1)
    throw new RangeError(`partitions per child must be a positive integer, not ${perChild}`);
  const groups: PartitionGroup[] = [];
  for (let first = 0; first < count; first += perChild) {
    const last = Math.min(count, first + perChild) - 1;
    groups.push({ slice: `${first}-${last}`, first, last });
  }
  return groups;
}

/** Folds one stream's slice into the topic's log of that stream, as if its records were read. */
function mergeStream(into: StreamLog, read: StreamLog): void {
  for (const [partition, [first, last]] of read.spans) {
    const span = into.spans.get(partition);
    into.spans.set(
      partition,
      span ? [Math.min(span[0], first), Math.max(span[1], last)] : [first, last],
    );
  }
  into.belowFloor += read.belowFloor;
  for (const copy of read.aborted) into.addAborted(copy);
  into.abortedCopies += read.abortedCopies - read.aborted.length;
  const floor = into.floor;
  // Seqs the topic had seen before this slice: a slice's first copy of one is a repeat, whose
  // bucket is the earlier copy's.
  const before = into.log.seen();
  const add = (from: number, to: number, times: number) => {
    if (to <= floor) {
      into.belowFloor += (to - from + 1) * times;
      return;
    }
    if (from <= floor) {
      into.belowFloor += (floor - from + 1) * times;
      from = floor + 1;
    }
    for (let i = 0; i < times; i++) into.log.addRange(from, to);
  };
  for (const [from, to] of read.log.seen().ranges()) add(from, to, 1);
  for (const run of read.log.duplicates()) add(run.from, run.to, run.times - 1);
  for (const [start, seqs] of read.buckets) {
    const first = seqs.above(floor).difference(before);
    if (first.isEmpty) continue;
    const bucket = into.buckets.get(start);
    if (bucket === undefined) into.buckets.set(start, first);
    else for (const [from, to] of first.ranges()) bucket.addRange(from, to);
  }
  for (const [seq, copies] of read.placements) {
    if (seq <= floor) continue;
    for (const copy of copies) into.place(seq, copy);
  }
}

/** Folds a slice into the topic's state (everything but `next` and `scanned`, which the run sets). */
export function mergeSlice(into: TopicLog, read: TopicLog): void {
  into.untracked += read.untracked;
  into.unread += read.unread;
  for (const [start, count] of read.topicBuckets) {
    if (start < into.foldedBefore) into.olderInLog += count;
    else into.topicBuckets.set(start, (into.topicBuckets.get(start) ?? 0) + count);
  }
  for (const [name, log] of read.streams) mergeStream(into.stream(name), log);
}

/**
 * The merge's "scan": folds into `state` (the checkpoint loaded at `version`) every named slice
 * read on top of that version. Complete when each was, and its child read to the end.
 */
export async function absorbSlices(
  ports: SlicePorts,
  topic: string,
  state: TopicLog,
  version: number,
  slices: readonly string[],
): Promise<ScanResult> {
  let scanned = 0;
  let complete = true;
  const next = new Map<number, number>();
  for (const slice of slices) {
    const saved = await ports.load(topic, slice);
    // Not read since the last merge (its child failed or has not run): its partitions wait.
    if (saved === undefined || saved.state.basedOn !== version) {
      complete = false;
      continue;
    }
    const read = new TopicLog(topic, saved.state.read);
    mergeSlice(state, read);
    for (const [partition, offset] of read.next) next.set(partition, offset);
    scanned += read.scanned;
    complete &&= saved.state.complete;
  }
  return { scanned, next, logStart: new Map(), complete };
}
