import { recordReader } from './auditor.js';
import type { PartitionGroup } from './merge-slices.js';
import type { AuditPorts, SlicePorts } from './ports.js';
import { RecentRecords, TopicLog } from './topic-log.js';

// One child of a fan-out audit (audit-merge.ts says how slices and the checkpoint fit): reads its
// partitions from where its slice stopped — or, when the topic's checkpoint has moved on since the
// slice was read, from the checkpoint's offsets — until the deadline, and saves the slice. It
// judges nothing: comparing with the ledger needs every partition, which only the merge has.

export interface SliceRequest extends PartitionGroup {
  readonly topic: string;
  /** Reading stops here (ms since the epoch); saving the slice needs time after. */
  readonly scanDeadlineAt: number;
  readonly bucketMs: number;
}

export interface SliceSummary {
  readonly slice: string;
  /** Records read by this run. */
  readonly scanned: number;
  /** Its partitions were read to their high watermarks. */
  readonly complete: boolean;
  /** The checkpoint version the slice is read on top of: a merge of that version absorbs it. */
  readonly basedOn: number;
}

export async function scanSlice(
  ports: Pick<AuditPorts, 'log' | 'checkpoints'> & { readonly slices: SlicePorts },
  request: SliceRequest,
): Promise<SliceSummary> {
  const { topic, slice, first, last, bucketMs } = request;
  const checkpoint = await ports.checkpoints.load(topic);
  const basedOn = checkpoint?.version ?? 0;
  const saved = await ports.slices.load(topic, slice);
  const current = saved !== undefined && saved.state.basedOn === basedOn;
  const state = new TopicLog(topic, current ? saved.state.read : undefined);
  const until = new Map<number, number>();
  if (!current) {
    for (const [partition, offset] of checkpoint?.state.next ?? [])
      if (partition >= first && partition <= last) state.next.set(partition, offset);
  }
  // `until` names the partitions to read; the scan stops at the high watermarks anyway.
  for (let partition = first; partition <= last; partition++)
    until.set(partition, Number.POSITIVE_INFINITY);
  // No ledger here: UNKNOWN outcomes are placed by the merge, which reads the ledger once.
  const scan = await ports.log.scan(
    topic,
    { from: state.next, until, deadlineAt: request.scanDeadlineAt },
    recordReader(state, new Map(), new RecentRecords(), bucketMs),
  );
  for (const [partition, low] of scan.logStart) {
    const from = state.next.get(partition);
    if (from !== undefined && low > from && partition >= first && partition <= last)
      state.unread += low - from;
  }
  for (const [partition, next] of scan.next) state.next.set(partition, next);
  state.scanned += scan.scanned;
  await ports.slices.save(
    topic,
    slice,
    { version: 1, topic, slice, basedOn, complete: scan.complete, read: state.toJSON() },
    saved?.version ?? 0,
  );
  return { slice, scanned: scan.scanned, complete: scan.complete, basedOn };
}
