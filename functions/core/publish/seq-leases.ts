import { beforeDeadline, type Deadline } from '../shared/deadline.js';
import type { Allocation, SequenceAllocator } from './ports.js';

// Seq leases: a container that publishes to a stream often takes more seqs than one request
// needs, and hands the rest to its next requests without a DynamoDB round trip. Seqs stay dense:
// a lease's unused rest is a hole, which the audit finds not in the log and records VOID.
//
// A leased seq is used only by a request that ends before the audit may judge the seq: when its
// deadline falls within `horizonMs` of the lease's allocation. With a horizon of 0 nothing is
// leased (every request allocates exactly what it needs, as without leases).
//
// Unused seqs are kept few (issue 31: a third of the seqs were VOID in a chaos run, leases sized
// by twice two windows' demand, a rest too small for the next request given up; 17 % in 1,000
// requests over 4 containers, each leaving a second's demand unused when the requests stopped):
// - requests that arrive while the container's allocation for the stream is on its way wait for
//   it; the next allocation takes their seqs too (the queued demand: each waiting request takes
//   its own, none left over), rather than each allocating, and leaving, a lease of its own;
// - beyond that, a lease holds spare seqs for requests still to come: the container's demand over
//   the last window (a sliding estimate), but never more spare seqs at hand than SPARE_SHARE of
//   the seqs it has handed out on the stream (or MIN_SPARE), up to `maxLease` in all. An idle or
//   slow container leases nothing extra, and one that stops, after however short a burst, leaves
//   at most that share unused: the rest of a lease is a hole the audit voids;
// - a rest too small for a request is kept (up to MAX_RESTS of them per stream) for a later,
//   smaller one, and so are seqs a request never used (`giveBack`).
// The price of the share is a ramp: a container holds a full spare lease of 100 only once it has
// handed out 100 / SPARE_SHARE seqs of the stream (3,334: 33 s at 100 requests a second); after
// that it writes the counter once per lease, as before.

/** Rests of earlier leases a container keeps per stream for smaller requests (the rest: holes). */
const MAX_RESTS = 8;
/** Spare seqs a container holds at most, as a share of the seqs it has handed out on a stream. */
const SPARE_SHARE = 0.03;
/**
 * Spare seqs a container may hold whatever it has handed out on a stream (so that its second
 * request already finds one). It was 8: 24 of 210 seqs (11 %) were VOID in a chaos run at load
 * 15, where each publisher sent a few dozen requests before the run stopped.
 */
const MIN_SPARE = 2;

export interface SeqLeaseOptions {
  /** The audit's horizon (ms): leased seqs are used only by requests ending within it. */
  readonly horizonMs: number;
  /** Most seqs leased beyond a request's own. */
  readonly maxLease: number;
  /** Rate window (ms): a lease holds about one window's demand of the container. */
  readonly windowMs: number;
  readonly now?: () => number;
}

interface Lease {
  next: number;
  last: number;
  readonly homeTopic: string | undefined;
  readonly allocatedAt: number;
}

interface Rate {
  windowStart: number;
  current: number;
  previous: number;
  /** Seqs handed out on the stream since the container last went quiet on it (two windows). */
  total: number;
}

export interface SeqLeases extends SequenceAllocator {
  /** The seqs `allocate` would hand out now without a round trip (none when it would call). */
  peek(stream: string, count: number, deadline: Deadline): boolean;
  /** Seqs handed out and never used by anyone: the next request of the stream may take them. */
  giveBack(stream: string, allocation: Allocation, count: number): void;
  /** Streams this container keeps state for (a lease, a rate): bounded by the recent ones. */
  tracked(): number;
}

export function createSeqLeases(inner: SequenceAllocator, options: SeqLeaseOptions): SeqLeases {
  const now = options.now ?? Date.now;
  /** Per stream, the seqs at hand, oldest allocation first. */
  const leases = new Map<string, Lease[]>();
  const rates = new Map<string, Rate>();
  const pending = new Map<string, Promise<unknown>>();
  /** Per stream, the seqs asked for by requests waiting for the allocation on its way. */
  const waiting = new Map<string, number>();
  let sweptAt = now();

  /**
   * Forgets what no request can use any more, once a window: a rate two windows old reads as
   * none, a lease past its horizon is usable by no request that starts now. A long-lived
   * container that publishes to many streams keeps state only for those of the last windows.
   */
  function sweep(at: number): void {
    if (at - sweptAt < options.windowMs) return;
    sweptAt = at;
    for (const [stream, rate] of rates) {
      if (at - rate.windowStart >= 2 * options.windowMs) rates.delete(stream);
    }
    for (const [stream, rests] of leases) {
      const live = rests.filter((lease) => lease.allocatedAt + options.horizonMs >= at);
      if (live.length === 0) leases.delete(stream);
      else leases.set(stream, live);
    }
  }

  const fits = (lease: Lease, count: number, deadline: Deadline) =>
    lease.last - lease.next + 1 >= count && deadline.at <= lease.allocatedAt + options.horizonMs;
  const size = (lease: Lease) => lease.last - lease.next + 1;
  /** The smallest rest a request can use (larger ones stay for larger requests), oldest first. */
  function usable(stream: string, count: number, deadline: Deadline): Lease | undefined {
    let best: Lease | undefined;
    for (const lease of leases.get(stream) ?? []) {
      if (fits(lease, count, deadline) && (best === undefined || size(lease) < size(best)))
        best = lease;
    }
    return best;
  }
  /** Seqs at hand that a request starting now may still use. */
  const atHand = (stream: string, deadline: Deadline) =>
    (leases.get(stream) ?? []).reduce((sum, l) => sum + (fits(l, 1, deadline) ? size(l) : 0), 0);

  /** Keeps seqs at hand, oldest first; past MAX_RESTS the smallest rest is given up (a hole). */
  function keep(stream: string, lease: Lease): void {
    const rests = leases.get(stream) ?? [];
    rests.push(lease);
    rests.sort((a, b) => a.allocatedAt - b.allocatedAt || a.next - b.next);
    if (rests.length > MAX_RESTS) {
      const smallest = rests.reduce((min, l) => (size(l) < size(min) ? l : min));
      rests.splice(rests.indexOf(smallest), 1);
    }
    leases.set(stream, rests);
  }

  /**
   * Counts a request's seqs. Returns what this container handed out in the last window (the
   * previous one counted for the part still inside it) and since it went quiet on the stream,
   * this request's own excluded.
   */
  function counted(stream: string, count: number): { recent: number; total: number } {
    const at = now();
    sweep(at);
    const rate = rates.get(stream) ?? { windowStart: at, current: 0, previous: 0, total: 0 };
    const windows = Math.floor((at - rate.windowStart) / options.windowMs);
    if (windows >= 1) {
      rate.previous = windows === 1 ? rate.current : 0;
      rate.current = 0;
      rate.windowStart += windows * options.windowMs;
    }
    const total = rate.total;
    rate.current += count;
    rate.total += count;
    rates.set(stream, rate);
    const elapsed = Math.min(1, (at - rate.windowStart) / options.windowMs);
    return { recent: Math.ceil(rate.previous * (1 - elapsed)) + rate.current - count, total };
  }

  /** Seqs the waiting requests asked for, counted while they wait (their own excluded on waking). */
  function queue(stream: string, count: number): void {
    const total = (waiting.get(stream) ?? 0) + count;
    if (total > 0) waiting.set(stream, total);
    else waiting.delete(stream);
  }

  function take(stream: string, lease: Lease, count: number): Allocation {
    const firstSeq = lease.next;
    lease.next += count;
    if (lease.next > lease.last) {
      const rest = (leases.get(stream) ?? []).filter((l) => l !== lease);
      if (rest.length === 0) leases.delete(stream);
      else leases.set(stream, rest);
    }
    return { firstSeq, homeTopic: lease.homeTopic, allocatedAt: lease.allocatedAt };
  }

  return {
    peek(stream, count, deadline) {
      return options.horizonMs > 0 && usable(stream, count, deadline) !== undefined;
    },

    async allocate(stream, count, topic, deadline) {
      const { recent, total } = counted(stream, count);
      if (options.horizonMs <= 0) return inner.allocate(stream, count, topic, deadline);
      for (;;) {
        const held = usable(stream, count, deadline);
        if (held !== undefined) return take(stream, held, count);
        const coming = pending.get(stream);
        if (coming === undefined || deadline.expired()) break;
        // Counted in the next allocation only if a lease allocated from now on may serve it (its
        // deadline within the horizon). Taken off again when it wakes, in the same step as it
        // looks for seqs: the first to wake allocates for those still waiting.
        const queued = deadline.at <= now() + options.horizonMs ? count : 0;
        queue(stream, queued);
        await beforeDeadline(coming, deadline, 'waiting for seqs').catch(() => undefined);
        queue(stream, -queued);
      }
      // The waiting requests' seqs, and spare ones: about a window's demand, less the seqs still
      // at hand, within the share of what the container handed out (few left when it stops).
      const share = Math.max(MIN_SPARE, Math.floor(SPARE_SHARE * total));
      const spare = Math.max(0, Math.min(recent, share) - atHand(stream, deadline));
      const extra = Math.min(options.maxLease, (waiting.get(stream) ?? 0) + spare);
      const call = inner.allocate(stream, count + extra, topic, deadline);
      pending.set(stream, call);
      let allocation: Allocation;
      try {
        allocation = await call;
      } finally {
        if (pending.get(stream) === call) pending.delete(stream);
      }
      if (extra > 0) {
        // Seqs still at hand (too few for this request) stay for smaller ones.
        keep(stream, {
          next: allocation.firstSeq + count,
          last: allocation.firstSeq + count + extra - 1,
          homeTopic: allocation.homeTopic,
          allocatedAt: allocation.allocatedAt,
        });
      }
      return allocation;
    },

    tracked: () => new Set([...leases.keys(), ...rates.keys()]).size,

    giveBack(stream, allocation, count) {
      if (options.horizonMs <= 0) return;
      const last = allocation.firstSeq + count - 1;
      const lease = leases
        .get(stream)
        ?.find((l) => l.next === last + 1 && l.allocatedAt === allocation.allocatedAt);
      if (lease !== undefined) {
        lease.next = allocation.firstSeq; // the seqs right before the lease's rest
      } else {
        keep(stream, {
          next: allocation.firstSeq,
          last,
          homeTopic: allocation.homeTopic,
          allocatedAt: allocation.allocatedAt,
        });
      }
    },
  };
}
