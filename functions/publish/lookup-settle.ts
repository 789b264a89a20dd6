import type { LedgerBlock } from '../core/publish/ports.js';
import { settleObserved, type TxnSettlePorts, unsettledTxn } from '../core/publish/txn-settle.js';
import type { Deadline } from '../core/shared/deadline.js';
import type { lookupRuntime } from './lookup-runtime.js';

// The lookup route's settling of a transactional request left SENDING or PREPARED (a commit in
// doubt, a request that died): core/publish/txn-settle.ts's settleObserved, the same settling a
// keyed retry does, fencing only when no live container holds the id (docs/transactions.md).

type Settling = NonNullable<Awaited<ReturnType<typeof lookupRuntime>>['settling']>;

/** What the lookup answers of an unsettled block it could not settle in time. */
export interface StillOpen {
  readonly message: string;
  /** When its transaction is over at the latest (ISO 8601), when the block says when it was written. */
  readonly definiteBy: string | undefined;
}

/** The block made definite where it can be within `deadline`; else as it is, and why. */
export async function settledForLookup(
  settling: Settling | undefined,
  block: LedgerBlock,
  deadline: Deadline,
): Promise<{ readonly block: LedgerBlock; readonly open?: StillOpen }> {
  if (settling === undefined || !unsettledTxn(block)) return { block };
  const ports: TxnSettlePorts & Pick<Settling, 'leaseOf'> = settling;
  const done = await settleObserved(ports, block, {
    now: Date.now(),
    deadline,
    transactionTimeoutMs: settling.transactionTimeoutMs,
    skewMs: settling.skewMs,
  });
  if (done.kind === 'settled') return { block: done.block };
  const now = done.kind === 'changed' ? done.block : undefined;
  // A retry or the audit wrote the block first: what it wrote is the answer (definite, or
  // reopened by a retry: in flight again).
  if (now !== undefined && !unsettledTxn(now)) return { block: now };
  const reason = done.kind === 'open' ? done.reason : 'the block changed while it was settled';
  const by = done.kind === 'open' ? done.definiteBy : undefined;
  const definiteBy = by === undefined ? undefined : new Date(by).toISOString();
  return {
    block: now ?? block,
    open: {
      message: `transaction ${block.txn.txnId}#${block.txn.generation} not definite yet: ${reason}; ${
        definiteBy === undefined
          ? 'look it up again later'
          : `definite at the latest by ${definiteBy} (the transaction timeout after its ledger block was written): look it up again then`
      }`,
      definiteBy,
    },
  };
}
