// Transactional ids leased from a pool (issue 33). Kafka fences an older producer of a
// transactional.id when a newer one initialises it, so two containers sharing one id live would
// fence each other on every request: each container leases an id of its own, keeps it while warm,
// and gives it up only by letting the lease expire (a Lambda container gets no reliable end).
//
// Two live holders are ruled out by the store's conditional writes (a lease is taken only when
// none is stored or the stored one has expired; renewed only by its holder at its generation) and
// by time: a holder starts a request only when the request, with `skewMs` for clocks, ends before
// its lease does, so by the time another container may take the id over, the holder has stopped
// using it. A holder frozen mid-request past that (a paused container, a stalled event loop) is a
// zombie: whoever takes the id over initialises it first (`mustFence`), which fences the zombie's
// epoch, so its open transaction is aborted and its commit refused (INVALID_PRODUCER_EPOCH).

/** A lease on one transactional id, as stored. */
export interface TxnIdLease {
  readonly txnId: string;
  readonly holder: string;
  /** Bumped by every take-over: a renewal names the generation it holds. */
  readonly generation: number;
  /** Epoch ms after which another container may take the id over. */
  readonly leaseUntil: number;
}

export interface TakenLease {
  readonly lease: TxnIdLease;
  /**
   * The id had a holder before (its lease expired): that holder may still be alive, frozen, with a
   * transaction open. Initialise the id (InitProducerId) before anything is sent under it.
   */
  readonly mustFence: boolean;
}

/** The store of leases (adapters/dynamodb/txn-id-pool.ts); every write is conditional. */
export interface TxnIdPoolStore {
  /** Every stored lease of the pool (ids never leased have none), read consistently. */
  leases(): Promise<readonly TxnIdLease[]>;
  /**
   * Takes `txnId` for `holder` until `leaseUntil` if no lease is stored or the stored one ended
   * before `now`; undefined when another holder's lease was there (or got there first).
   */
  take(
    txnId: string,
    holder: string,
    now: number,
    leaseUntil: number,
  ): Promise<TakenLease | undefined>;
  /** Extends `lease` to `leaseUntil` if it is still stored as it is; undefined when it is not. */
  renew(lease: TxnIdLease, leaseUntil: number): Promise<TxnIdLease | undefined>;
}

export interface TxnIdLeaserOptions {
  readonly store: TxnIdPoolStore;
  /** Ids `${idPrefix}-0` … `${idPrefix}-${poolSize - 1}`. */
  readonly idPrefix: string;
  readonly poolSize: number;
  /** This container. */
  readonly holder: string;
  /** A lease's length: longer than the longest request (the function's timeout) plus skewMs. */
  readonly leaseMs: number;
  /** Clock differences between containers allowed for. */
  readonly skewMs: number;
  /** The longest a request can run (the function's timeout). */
  readonly maxRequestMs: number;
  readonly now?: () => number;
  readonly random?: () => number;
}

/** No id of the pool is free: every one is held by a live lease. */
export class TxnIdPoolExhausted extends Error {
  override readonly name = 'TxnIdPoolExhausted';
}

/** The ids of the pool a container may take now, in a random order (so leasers spread out). */
export function freeIds(
  prefix: string,
  size: number,
  stored: readonly TxnIdLease[],
  now: number,
  random: () => number,
): string[] {
  const held = new Set(stored.filter((lease) => lease.leaseUntil >= now).map((l) => l.txnId));
  const free: string[] = [];
  for (let n = 0; n < size; n++) {
    const id = `${prefix}-${n}`;
    if (!held.has(id)) free.push(id);
  }
  for (let i = free.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [free[i], free[j]] = [free[j] as string, free[i] as string];
  }
  return free;
}

/**
 * What a holder does before a request: use its lease as it is (the longest request, begun now,
 * ends `skewMs` before it), renew it first (also when it lapsed: a renewal holds only if no one
 * took the id over meanwhile, its generation unchanged), or lease an id (it holds none).
 */
export function leaseStep(
  lease: TxnIdLease | undefined,
  now: number,
  options: Pick<TxnIdLeaserOptions, 'skewMs' | 'maxRequestMs'>,
): 'use' | 'renew' | 'lease' {
  if (lease === undefined) return 'lease';
  return lease.leaseUntil - options.skewMs >= now + options.maxRequestMs ? 'use' : 'renew';
}

/**
 * One container's lease, kept while warm: `forRequest` answers the id to send the next request
 * under, renewing or leasing again as needed.
 */
export function createTxnIdLeaser(options: TxnIdLeaserOptions) {
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  if (options.leaseMs <= options.maxRequestMs + 2 * options.skewMs) {
    throw new RangeError(
      `a transactional id lease of ${options.leaseMs} ms must outlast the longest request ` +
        `(${options.maxRequestMs} ms) plus twice the clock skew (${options.skewMs} ms)`,
    );
  }
  let current: TxnIdLease | undefined;

  async function leaseAnew(): Promise<TakenLease> {
    const at = now();
    for (const txnId of freeIds(
      options.idPrefix,
      options.poolSize,
      await options.store.leases(),
      at,
      random,
    )) {
      const taken = await options.store.take(txnId, options.holder, now(), now() + options.leaseMs);
      if (taken) return taken;
    }
    throw new TxnIdPoolExhausted(
      `all ${options.poolSize} transactional ids of ${options.idPrefix} are leased by live containers`,
    );
  }

  return {
    /** The lease to send one request under (`mustFence`: initialise the id first). */
    async forRequest(): Promise<TakenLease> {
      const step = leaseStep(current, now(), options);
      if (step === 'use' && current) return { lease: current, mustFence: false };
      if (step === 'renew' && current) {
        const renewed = await options.store.renew(current, now() + options.leaseMs);
        if (renewed) {
          current = renewed;
          return { lease: renewed, mustFence: false };
        }
      }
      // None yet, or taken over while this container was frozen: a new id, and a new producer.
      current = undefined;
      const taken = await leaseAnew();
      current = taken.lease;
      return taken;
    },
  };
}
