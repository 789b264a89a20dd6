import type { Deadline } from '../shared/deadline.js';
import { DependencyUnavailableError } from '../shared/errors.js';
import type { RecordOutcome } from '../shared/outcomes.js';
import type { Ledger, LedgerBlock, TransactionalSender, TxnMark } from './ports.js';

// A keyed retry of a transactional request that left its block SENDING or PREPARED (it died, or
// its commit got no definite answer) first makes that attempt definite (docs/transactions.md):
// its id is initialised again, which completes a prepared commit and aborts anything else, and a
// PREPARED block's offsets are read with read_committed. Visible with their seqs: ACKED at those
// offsets, nothing is resent. Otherwise (or never prepared): NOT_SENT, "not visible to
// read_committed consumers", and the retry sends them again under the same seqs, so a
// read_committed consumer sees one copy of each seq.

/** Whether `block` is a transaction a retry must settle before it sends or answers. */
export function unsettledTxn(
  block: LedgerBlock | undefined,
): block is LedgerBlock & { readonly txn: TxnMark } {
  return block?.txn?.state === 'SENDING' || block?.txn?.state === 'PREPARED';
}

/** The block settled and written over the version read (the retry holds the key's lock). */
export async function settleTxnBlock(
  ports: { readonly ledger: Ledger; readonly transactions: TransactionalSender },
  block: LedgerBlock & { readonly txn: TxnMark },
  deadline: Deadline,
): Promise<LedgerBlock> {
  const { txn } = block;
  const fate = await ports.transactions.settle(
    block.topic,
    txn,
    { stream: block.stream },
    deadline,
  );
  const places = new Map((txn.offsets ?? []).map((place) => [place.seq, place]));
  const name = `${txn.txnId}#${txn.generation}`;
  const outcomes = block.outcomes.map((outcome, i): RecordOutcome => {
    const place = places.get(block.firstSeq + i);
    if (fate === 'COMMITTED' && place !== undefined) {
      return { status: 'ACKED', partition: place.partition, offset: place.offset };
    }
    // Outcomes kept from an attempt before the transaction stay as they are.
    if (outcome.status !== 'UNKNOWN') return outcome;
    return {
      status: 'NOT_SENT',
      message: `transaction ${name} was not committed (${txn.state === 'PREPARED' ? 'aborted' : 'never prepared'}, its id initialised again): not visible to read_committed consumers`,
    };
  });
  const { version: read, writtenAt: _, ...rest } = block;
  const settled: LedgerBlock = {
    ...rest,
    outcomes,
    txn: {
      txnId: txn.txnId,
      generation: txn.generation,
      state: fate === 'COMMITTED' ? 'COMMITTED' : 'ABORTED',
    },
  };
  const version = await ports.ledger.write(settled, deadline, read ?? '');
  if (version === undefined) {
    throw new DependencyUnavailableError(
      `seqs from ${block.firstSeq} of stream ${block.stream}: the ledger block changed while its transaction was settled; retry`,
      { retryAfterSeconds: 1 },
    );
  }
  return { ...settled, version };
}
