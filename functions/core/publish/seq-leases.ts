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
// The lease grows with the container's rate in the stream (twice the seqs it handed out in the
// last two windows), up to `maxLease`: an idle or slow container leases nothing extra, so the seqs an
// ending container leaves VOID are at most about what it publishes in two windows. Requests that
// arrive while the container's allocation for the stream is on its way wait for it (and take
// from the lease it brings) rather than each allocating, and leaving, a lease of its own.

export interface SeqLeaseOptions {
  /** The audit's horizon (ms): leased seqs are used only by requests ending within it. */
  readonly horizonMs: number;
  /** Most seqs leased beyond a request's own. */
  readonly maxLease: number;
  /** Rate window (ms) the lease is sized by. */
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
  const leases = new Map<string, Lease>();
  const rates = new Map<string, Rate>();
  const pending = new Map<string, Promise<unknown>>();
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
    for (const [stream, lease] of leases) {
      if (lease.allocatedAt + options.horizonMs < at) leases.delete(stream);
    }
  }

  const usable = (lease: Lease | undefined, count: number, deadline: Deadline) =>
    lease !== undefined &&
    lease.last - lease.next + 1 >= count &&
    deadline.at <= lease.allocatedAt + options.horizonMs;

  function counted(stream: string, count: number): number {
    const at = now();
    sweep(at);
    const rate = rates.get(stream) ?? { windowStart: at, current: 0, previous: 0 };
    const windows = Math.floor((at - rate.windowStart) / options.windowMs);
    if (windows >= 1) {
      rate.previous = windows === 1 ? rate.current : 0;
      rate.current = 0;
      rate.windowStart += windows * options.windowMs;
    }
    rate.current += count;
    rates.set(stream, rate);
    // What this container handed out in the stream lately, this request's own excluded.
    return rate.previous + rate.current - count;
  }

  function take(stream: string, lease: Lease, count: number): Allocation {
    const firstSeq = lease.next;
    lease.next += count;
    if (lease.next > lease.last) leases.delete(stream);
    return { firstSeq, homeTopic: lease.homeTopic, allocatedAt: lease.allocatedAt };
  }

  return {
    peek(stream, count, deadline) {
      return options.horizonMs > 0 && usable(leases.get(stream), count, deadline);
    },

    async allocate(stream, count, topic, deadline) {
      const recent = counted(stream, count);
      if (options.horizonMs <= 0) return inner.allocate(stream, count, topic, deadline);
      for (;;) {
        const held = leases.get(stream);
        if (usable(held, count, deadline)) return take(stream, held as Lease, count);
        const coming = pending.get(stream);
        if (coming === undefined || deadline.expired()) break;
        await beforeDeadline(coming, deadline, 'waiting for seqs').catch(() => undefined);
      }
      // Twice the recent rate: the lease outlasts the requests that come while it is used.
      const extra = Math.min(options.maxLease, 2 * recent);
      const call = inner.allocate(stream, count + extra, topic, deadline);
      pending.set(stream, call);
      let allocation: Allocation;
      try {
        allocation = await call;
      } finally {
        if (pending.get(stream) === call) pending.delete(stream);
      }
      if (extra > 0) {
        // A lease still held (another request of this container took one meanwhile, or it was
        // too small) is given up: its rest is a hole the audit voids.
        leases.set(stream, {
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
      const lease = leases.get(stream);
      const last = allocation.firstSeq + count - 1;
      if (lease?.next === last + 1 && lease.allocatedAt === allocation.allocatedAt) {
        lease.next = allocation.firstSeq; // the seqs right before the lease's rest
      } else if (lease === undefined) {
        leases.set(stream, {
          next: allocation.firstSeq,
          last,
          homeTopic: allocation.homeTopic,
          allocatedAt: allocation.allocatedAt,
        });
      }
    },
  };
}
