import type { HeldFinding } from '../../core/reconcile/offsets/judge-held.js';
import type { OffsetObservation } from '../../core/reconcile/offsets/offset-status.js';
import type { PartitionHistory } from '../../core/reconcile/offsets/partition-history.js';

// How a history item's partitions are stored (attribute `parts`): compact JSON, partition →
// { c: changes, g?: goneAt, h?: [status, since, good?], a?: [at, committed|null] }, each change
// (and a held finding's good reading) [observedAt, committed|null, logStart, logEnd,
// committedAt?]: ~60 bytes instead of ~120 as objects, and an item's write costs by its size.

type Change =
  | [number, number | null, number, number]
  | [number, number | null, number, number, number];

const pack = (o: OffsetObservation): Change =>
  o.committedAt === undefined
    ? [o.observedAt, o.committed, o.logStart, o.logEnd]
    : [o.observedAt, o.committed, o.logStart, o.logEnd, o.committedAt];

const unpack = ([
  observedAt,
  committed,
  logStart,
  logEnd,
  committedAt,
]: Change): OffsetObservation => ({
  observedAt,
  committed,
  logStart,
  logEnd,
  ...(committedAt !== undefined && { committedAt }),
});

type Held = [HeldFinding['status'], number] | [HeldFinding['status'], number, Change];

interface Stored {
  c: Change[];
  g?: number;
  h?: Held;
  a?: [number, number | null];
}

export function encodeParts(partitions: ReadonlyMap<number, PartitionHistory>): string {
  const out: Record<number, Stored> = {};
  for (const [p, h] of partitions) {
    const held = h.held;
    out[p] = {
      c: h.changes.map(pack),
      ...(h.goneAt !== undefined && { g: h.goneAt }),
      ...(held && {
        h: held.good ? [held.status, held.since, pack(held.good)] : [held.status, held.since],
      }),
      ...(h.ack && { a: [h.ack.at, h.ack.committed] }),
    };
  }
  return JSON.stringify(out);
}

export function decodeParts(parts: string): Map<number, PartitionHistory> {
  const raw = JSON.parse(parts) as Record<string, Stored>;
  return new Map(
    Object.entries(raw).map(([p, h]) => [
      Number(p),
      {
        changes: h.c.map(unpack),
        ...(h.g !== undefined && { goneAt: h.g }),
        ...(h.h && {
          held: { status: h.h[0], since: h.h[1], ...(h.h[2] && { good: unpack(h.h[2]) }) },
        }),
        ...(h.a && { ack: { at: h.a[0], committed: h.a[1] } }),
      },
    ]),
  );
}
