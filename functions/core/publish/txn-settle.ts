import type { Deadline } from '../shared/deadline.js';
import { DependencyUnavailableError } from '../shared/errors.js';
import type { RecordOutcome } from '../shared/outcomes.js';
import type { Ledger, LedgerBlock, TxnMark, TxnSettler } from './ports.js';

// A transactional request that left its block SENDING or PREPARED (it died, or its commit got no
// definite answer) is made definite here (docs/transactions.md), by a keyed retry, the lookup
// route or the audit, all through `settleTxn`:
//
// - a PREPARED block's offsets are read with read_committed. A read_committed read cannot pass an
//   open transaction (it stops at the last stable offset), so once it has read past every
//   recorded offset the transaction is final: visible with their seqs, ACKED at those offsets;
//   not visible, NOT_SENT ("not visible to read_committed consumers").
// - the id may first be initialised again (a fence: a prepared commit completes, anything else
//   aborts), which ends an open transaction now instead of at its timeout. A fence also ends the
//   open transaction of whoever holds the id now, so `fence` says when it is allowed:
//   'always' (the keyed retry, which must know before it resends), or 'when-unheld' (the lookup
//   and the audit, which only observe): only when no live container can hold the id at the
//   recorded lease (`fenceDecision`).
// - a SENDING block (never prepared: no commit was ever asked for) is NOT_SENT once nothing can
//   still prepare it: the settling write replaces the version its PREPARED write would need.
//
// The definite outcome is written over the version read, so a racing retry, lookup or audit
// cannot be overwritten: the loser reads the block again and answers what the winner wrote.

/** Kafka's transaction.abort.timed.out.transaction.cleanup.interval.ms (its default, 10 s). */
export const TXN_ABORT_SCAN_MS = 10_000;

/** Whether `block` is a transaction not made definite yet (SENDING or PREPARED). */
export function unsettledTxn(
  block: LedgerBlock | undefined,
): block is LedgerBlock & { readonly txn: TxnMark } {
  return block?.txn?.state === 'SENDING' || block?.txn?.state === 'PREPARED';
}

/** The lease of an id as its pool stores it now (undefined: none stored in this pool). */
export interface StoredLease {
  readonly generation: number;
  readonly leaseUntil: number;
}

/** When a transaction recorded in `block` is over at the latest: its coordinator aborts it. */
export function definiteBy(block: LedgerBlock, transactionTimeoutMs: number): number | undefined {
  return block.writtenAt === undefined
    ? undefined
    : block.writtenAt + transactionTimeoutMs + TXN_ABORT_SCAN_MS;
}

/**
 * What an observer (lookup, audit) may do with an unsettled block:
 * - 'read': read its offsets read_committed only. The block is past its transaction's timeout
 *   (the coordinator has ended it), or the id was taken over since (the new holder's
 *   InitProducerId ended it; a fence would end the new holder's own transaction), or the
 *   recorded lease is still live (its container may be running this very request: a fence
 *   would abort it, so the read waits for the commit or the timeout instead).
 * - 'fence': the recorded lease has expired and nobody took the id over (or the pool holds no
 *   lease of it): no live container uses the id, a frozen one's transaction is ended now.
 * A SENDING block is settled only past its timeout or with a fence or a take-over: with the
 * lease still live its request may still be sending ('wait').
 */
export function fenceDecision(
  block: LedgerBlock & { readonly txn: TxnMark },
  lease: StoredLease | undefined,
  now: number,
  transactionTimeoutMs: number,
  skewMs: number,
): 'read' | 'fence' | 'wait' {
  const by = definiteBy(block, transactionTimeoutMs);
  if (by !== undefined && now >= by + skewMs) return 'read';
  const { generation } = block.txn;
  if (lease !== undefined && lease.generation > generation) return 'read';
  const live =
    lease !== undefined && lease.generation === generation && lease.leaseUntil + skewMs > now;
  if (!live) return 'fence';
  return block.txn.state === 'PREPARED' ? 'read' : 'wait';
}

export interface TxnSettlePorts {
  readonly ledger: Pick<Ledger, 'write' | 'find'>;
  readonly transactions: TxnSettler;
}

export type TxnSettlement =
  /** Written by this call: definite. */
  | { readonly kind: 'settled'; readonly block: LedgerBlock }
  /** Another writer changed the block first: what the ledger holds now (maybe still open). */
  | { readonly kind: 'changed'; readonly block: LedgerBlock | undefined }
  /** Not definite within the deadline, or not to be touched yet: when it will be at the latest. */
  | { readonly kind: 'open'; readonly reason: string; readonly definiteBy: number | undefined };

/**
 * Settles an unsettled transactional block and writes the outcome over the version read.
 * `fence: true` initialises the recorded id first; false only reads (a SENDING block is then
 * NOT_SENT without a read: the caller has judged that nothing can prepare it any more).
 */
export async function settleTxn(
  ports: TxnSettlePorts,
  block: LedgerBlock & { readonly txn: TxnMark },
  options: { readonly fence: boolean; readonly deadline: Deadline },
): Promise<TxnSettlement> {
  const { txn } = block;
  const fate = await ports.transactions.settle(
    block.topic,
    txn,
    { stream: block.stream },
    options.deadline,
    { fence: options.fence },
  );
  const places = new Map((txn.offsets ?? []).map((place) => [place.seq, place]));
  const name = `${txn.txnId}#${txn.generation}`;
  const how = options.fence ? 'its id initialised again' : 'read with read_committed';
  const outcomes = block.outcomes.map((outcome, i): RecordOutcome => {
    const place = places.get(block.firstSeq + i);
    if (fate === 'COMMITTED' && place !== undefined) {
      return { status: 'ACKED', partition: place.partition, offset: place.offset };
    }
    // Outcomes kept from an attempt before the transaction stay as they are.
    if (outcome.status !== 'UNKNOWN') return outcome;
    return {
      status: 'NOT_SENT',
      message: `transaction ${name} was not committed (${txn.state === 'PREPARED' ? 'aborted' : 'never prepared'}, ${how}): not visible to read_committed consumers`,
    };
  });
  // writtenAt kept: the block's day was marked by its first write (adapters/dynamodb/ledger.ts),
  // so the settling is a PutItem only (the lookup and the audit have no UpdateItem grant).
  const { version: read, ...rest } = block;
  const settled: LedgerBlock = {
    ...rest,
    outcomes,
    txn: {
      txnId: txn.txnId,
      generation: txn.generation,
      state: fate === 'COMMITTED' ? 'COMMITTED' : 'ABORTED',
    },
  };
  const version = await ports.ledger.write(settled, options.deadline, read ?? '');
  if (version === undefined) {
    return {
      kind: 'changed',
      block: await ports.ledger.find(block.stream, block.firstSeq, options.deadline),
    };
  }
  return { kind: 'settled', block: { ...settled, version } };
}

/** The keyed retry's settling (it holds the key's lock): always fenced; a change since is a 503. */
export async function settleTxnBlock(
  ports: TxnSettlePorts,
  block: LedgerBlock & { readonly txn: TxnMark },
  deadline: Deadline,
): Promise<LedgerBlock> {
  const done = await settleTxn(ports, block, { fence: true, deadline });
  if (done.kind === 'settled') return done.block;
  // A lookup or the audit settled it first: its outcome is as definite as this one's.
  if (done.kind === 'changed' && done.block !== undefined && !unsettledTxn(done.block)) {
    return done.block;
  }
  throw new DependencyUnavailableError(
    `seqs from ${block.firstSeq} of stream ${block.stream}: the ledger block changed while its transaction was settled; retry`,
    { retryAfterSeconds: 1 },
  );
}

/** An observer's settling (lookup, audit): a fence only by `fenceDecision`, never past the deadline. */
export async function settleObserved(
  ports: TxnSettlePorts & {
    /** The lease the pool stores now for `txnId` (undefined: none in this pool). */
    readonly leaseOf: (txnId: string, deadline: Deadline) => Promise<StoredLease | undefined>;
  },
  block: LedgerBlock & { readonly txn: TxnMark },
  options: {
    readonly now: number;
    readonly deadline: Deadline;
    readonly transactionTimeoutMs: number;
    readonly skewMs: number;
  },
): Promise<TxnSettlement> {
  const by = definiteBy(block, options.transactionTimeoutMs);
  const decision = fenceDecision(
    block,
    await ports.leaseOf(block.txn.txnId, options.deadline),
    options.now,
    options.transactionTimeoutMs,
    options.skewMs,
  );
  if (decision === 'wait') {
    return {
      kind: 'open',
      reason: `its request may still be sending under the live lease ${block.txn.txnId}#${block.txn.generation}`,
      definiteBy: by,
    };
  }
  try {
    return await settleTxn(ports, block, {
      fence: decision === 'fence',
      deadline: options.deadline,
    });
  } catch (error) {
    if (!(error instanceof DependencyUnavailableError) && !options.deadline.expired()) throw error;
    return {
      kind: 'open',
      reason: `not settled before the deadline (${error instanceof Error ? error.message : String(error)})`,
      definiteBy: by,
    };
  }
}
