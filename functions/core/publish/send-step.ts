import {
  DependencyUnavailableError,
  type TallyError,
  UnprocessableInputError,
} from '../shared/errors.js';
import type { RecordOutcome } from '../shared/outcomes.js';
import { LostKeyRace } from './key-rules.js';
import { type PlannedRecord, stamp } from './plan.js';
import type {
  Ledger,
  LedgerBlock,
  LedgerVersion,
  PublishRequest,
  RecordSender,
  TransactionalSender,
  TxnLease,
  TxnMark,
} from './ports.js';

// A publish's send: the ledger block opened first where the plan in core/publish/publisher.ts asks for
// it (side by side with a first attempt's key claim; on the fast path only the claim), the send,
// and the outcomes' write.

/** One send of a request's planned records (`sendAndRecord`). */
interface SendOptions {
  readonly request: PublishRequest;
  readonly firstSeq: number;
  readonly planned: readonly PlannedRecord[];
  /** A first attempt's key claim, run side by side with the block's first write. */
  readonly claim?: (() => Promise<void>) | undefined;
  /**
   * Open the ledger block (UNKNOWN) before the send; false on the fast path, where the
   * allocation is the write-ahead record and the outcomes are the block's first write.
   */
  readonly ledgerFirst: boolean;
  /** The earliest time the audit may judge these seqs (Ledger.open's `judgedFrom`). */
  readonly judgedFrom?: number;
}

/** Kept back from the send for the DynamoDB writes that follow it (a few ms each when healthy). */
const AFTER_SEND_MS = 250;
/**
 * And per record: the outcome write encodes (and past 32 KB gzips) every record's outcome into
 * one item. 5,000 outcomes took ~40 ms on a quiet machine and more than the flat 250 ms at load
 * ~20 (a clean-clone CI run, faults-broker-restart): the write was aborted at the deadline and the
 * batch left no block, so the lookup by key found none. 0.1 ms a record keeps ~10× that margin.
 */
const AFTER_SEND_MS_PER_RECORD = 0.1;

/**
 * The send's deadline: the request's, less what the writes after the send need for `records`
 * outcomes (never more than a fifth of what is left, so a short deadline still sends).
 */
const sendDeadline = (request: PublishRequest, records: number) =>
  request.deadline.less(
    Math.min(
      AFTER_SEND_MS + AFTER_SEND_MS_PER_RECORD * records,
      request.deadline.remainingMs() / 5,
    ),
  );

/** The planned records to send as messages, each stamped with its tally.* headers. */
const messagesOf = (toSend: readonly PlannedRecord[], request: PublishRequest) =>
  toSend.map((p) => ({
    partition: p.partition,
    key: p.input.key?.bytes ?? null,
    value: p.input.value?.bytes ?? null,
    headers: stamp(p.input, request, p.seq),
    timestamp: p.timestamp,
  }));

export function createSendStep(ports: {
  readonly sender: RecordSender;
  readonly ledger: Ledger;
  readonly transactions?: TransactionalSender | undefined;
}) {
  /** Records VOID a block this request allocated and will never send (best effort). */
  async function voidUnsent(request: PublishRequest, block: LedgerBlock, opened?: string) {
    const message = 'allocated; the request stopped before sending, nothing was sent';
    const outcomes = block.outcomes.map((): RecordOutcome => ({ status: 'VOID', message }));
    const voided = { ...block, outcomes };
    // A block this request opened is its own to overwrite; otherwise only where none starts.
    await (opened !== undefined
      ? ports.ledger.write(voided, request.deadline, opened)
      : ports.ledger.void(voided, request.deadline)
    ).catch(() => 0);
  }

  /**
   * The block's first write, conditional so that seqs the audit has voided are never sent, side
   * by side with `claim` (a first attempt's key item) when there is one. When either fails the
   * request has seqs and sends nothing: without a key (or when the key was not claimed) nothing
   * will ever use them, so they are recorded VOID if the deadline allows (else they stay a hole
   * the audit voids later); with a key claimed the item keeps them for a retry. Returns what
   * the request's outcome write expects to replace: the version it opened, or no block at all.
   */
  async function open(
    request: PublishRequest,
    block: LedgerBlock,
    claim: (() => Promise<void>) | undefined,
    ledgerFirst: boolean,
    judgedFrom: number | undefined,
  ): Promise<LedgerVersion> {
    const [opened, claimed] = await Promise.allSettled([
      ledgerFirst
        ? ports.ledger.open(block, request.deadline, judgedFrom)
        : Promise.resolve('unopened' as const),
      claim?.(),
    ]);
    const version =
      opened.status === 'fulfilled' && typeof opened.value === 'object'
        ? opened.value.version
        : undefined;
    // Without a key, or with a key another request won, nothing will ever send these seqs. A
    // claim that failed otherwise may have been applied (its answer lost): the key may hold the
    // seqs for a retry, so they are left as they are (a hole the audit voids, if not).
    const lost = claimed.status === 'rejected' && claimed.reason instanceof LostKeyRace;
    const nobody = request.idempotencyKey === undefined && opened.status === 'rejected';
    const giveBack = lost && !ledgerFirst && (claimed.reason as LostKeyRace).giveBack;
    if (giveBack) giveBack();
    else if (lost || nobody) {
      await voidUnsent(request, block, version);
    }
    if (opened.status === 'rejected') throw opened.reason;
    if (claimed.status === 'rejected') {
      const race = claimed.reason as LostKeyRace;
      // A claim asked first hands its finding up whole: the request is answered from it.
      throw lost ? (race.winner !== undefined ? race : race.error) : claimed.reason;
    }
    if (opened.value === 'voided') throw voidedError(request, block.firstSeq);
    return version ?? 'absent';
  }

  /**
   * The send and the outcomes' write. With `ledgerFirst` the ledger block is opened (UNKNOWN)
   * before the send, so no record is in flight unrecorded. Without it (the fast path) no ledger
   * block is written before the send (a first attempt's key claim still is): the allocation is
   * the write-ahead record, and the outcomes' write is the block's first; publisher.ts's plan
   * says when a request may do so. The outcome write is returned running (`recorded`, resolving
   * to its warnings), so a key's answer is stored beside it. It lands only over the block this
   * request opened (or where none is, on the fast path): an attempt whose write arrives after its
   * retry opened the block, or after the audit settled it, must not put its own "not sent" over
   * a later attempt's "may have landed" (chaos seed 109).
   */
  async function sendAndRecord(
    options: SendOptions,
  ): Promise<{ final: RecordOutcome[]; recorded: Promise<string[]> }> {
    const { request, firstSeq, planned, claim, ledgerFirst, judgedFrom } = options;
    if (request.transactional === true && ports.transactions !== undefined) {
      return sendInTransaction(ports.transactions, options);
    }
    const session = await ports.sender.session();
    const block = (outcomes: RecordOutcome[], sentBy: string) => ({
      stream: request.stream,
      firstSeq,
      topic: request.topic,
      session: sentBy,
      idempotencyKey: request.idempotencyKey,
      outcomes,
    });
    const inFlight: RecordOutcome = {
      status: 'UNKNOWN',
      message: `sent by session ${session}, no answer recorded`,
    };
    const opened = await open(
      request,
      block(
        planned.map((p) => p.kept ?? inFlight),
        session,
      ),
      claim,
      ledgerFirst,
      judgedFrom,
    );
    // A first attempt keeps nothing: every planned record is sent, in its order.
    const toSend = planned.some((p) => p.kept !== undefined)
      ? planned.filter((p) => p.kept === undefined)
      : planned;
    const sent = await ports.sender.send(
      request.topic,
      messagesOf(toSend, request),
      // Time is kept back for the writes after the send (outcomes, the key's answer): the
      // deadline bounds them too, and a send that took all of it would leave them none.
      sendDeadline(request, planned.length),
    );
    // The records sent are the planned ones without a kept outcome, in their order: the i-th of
    // them has the i-th outcome (no lookup by seq per record).
    let next = 0;
    const final = planned.map((p) => p.kept ?? resent(p, sent.outcomes[next++] ?? inFlight));
    const recorded = ports.ledger.write(block(final, sent.session), request.deadline, opened).then(
      (written) =>
        written !== undefined
          ? []
          : [
              'outcomes not recorded in the ledger: a later attempt or the audit wrote the block since this request opened it',
            ],
      (error: unknown) => {
        // A write that timed out may still land; one that never does leaves what was there.
        const there =
          opened === 'absent'
            ? 'no block holds these seqs yet: the audit places them from the log, or records them VOID'
            : 'it says UNKNOWN unless this write lands late, and the audit settles it from the log';
        return [`outcomes not recorded in the ledger (${there}): ${String(error)}`];
      },
    );
    return { final, recorded };
  }

  /**
   * A transactional request's send (docs/transactions.md): the block opened as before (SENDING,
   * with the id and lease generation, where the plan opens it first), every record sent in one
   * transaction, then — every send acknowledged, offsets known, before EndTxn — the block written
   * PREPARED with those offsets over the version opened, and only then the commit; ACKED once it
   * is committed. A commit in doubt leaves the block PREPARED for a keyed retry to settle
   * (core/publish/publisher.ts); a transaction not committed is NOT_SENT.
   */
  async function sendInTransaction(
    txns: TransactionalSender,
    { request, firstSeq, planned, claim, ledgerFirst, judgedFrom }: SendOptions,
  ): Promise<{ final: RecordOutcome[]; recorded: Promise<string[]> }> {
    let lease: TxnLease | undefined;
    let leaseError: unknown;
    try {
      lease = await txns.lease(request.deadline);
    } catch (error) {
      leaseError = error;
    }
    const session = lease === undefined ? 'none' : `${lease.txnId}#${lease.generation}`;
    const mark = (state: TxnMark['state'], offsets?: TxnMark['offsets']): TxnMark | undefined =>
      lease && { ...lease, state, ...(offsets !== undefined && { offsets }) };
    const block = (outcomes: RecordOutcome[], txn: TxnMark | undefined): LedgerBlock => ({
      stream: request.stream,
      firstSeq,
      topic: request.topic,
      session,
      idempotencyKey: request.idempotencyKey,
      outcomes,
      ...(txn !== undefined && { txn }),
    });
    const inFlight: RecordOutcome = {
      status: 'UNKNOWN',
      message: `sent in transaction ${session}, not committed yet`,
    };
    const opened = await open(
      request,
      block(
        planned.map((p) => p.kept ?? inFlight),
        mark('SENDING'),
      ),
      claim,
      ledgerFirst,
      judgedFrom,
    );
    const toSend = planned.filter((p) => p.kept === undefined);
    let prepared: string | undefined;
    const outcome =
      lease === undefined
        ? {
            status: 'NOT_COMMITTED' as const,
            message: `no transactional id could be leased, nothing was sent: ${String(leaseError)}`,
          }
        : await txns.send(
            lease,
            request.topic,
            messagesOf(toSend, request),
            sendDeadline(request, planned.length),
            async (offsets) => {
              const places = toSend.map((p, i) => ({
                seq: p.seq,
                ...(offsets[i] as { partition: number; offset: string }),
              }));
              const message = `prepared in transaction ${session}: committed at its offset unless the transaction was aborted`;
              const version = await ports.ledger.write(
                block(
                  planned.map((p) => p.kept ?? { status: 'UNKNOWN', message }),
                  mark('PREPARED', places),
                ),
                request.deadline,
                opened,
              );
              // Another attempt or the audit wrote the block since: this one must not commit.
              if (version === undefined)
                throw new Error('the ledger block changed since it was opened');
              prepared = version;
            },
          );
    let final: RecordOutcome[];
    let settled: LedgerBlock | undefined;
    if (outcome.status === 'COMMITTED') {
      const places = new Map(toSend.map((p, i) => [p.seq, outcome.offsets[i]]));
      final = planned.map((p) => {
        const place = places.get(p.seq);
        return (
          p.kept ??
          (place === undefined
            ? inFlight
            : { status: 'ACKED', partition: place.partition, offset: place.offset })
        );
      });
      settled = block(final, mark('COMMITTED'));
    } else if (outcome.status === 'NOT_COMMITTED') {
      final = planned.map(
        (p) => p.kept ?? resent(p, { status: 'NOT_SENT', message: outcome.message }),
      );
      settled = block(final, mark('ABORTED'));
    } else {
      // In doubt: the block stays PREPARED, its offsets there for a retry to settle.
      final = planned.map(
        (p) =>
          p.kept ?? {
            status: 'UNKNOWN',
            message: `${outcome.message}; prepared in transaction ${session}: a retry with the same Idempotency-Key settles it`,
          },
      );
    }
    const recorded =
      settled === undefined
        ? Promise.resolve([])
        : ports.ledger.write(settled, request.deadline, prepared ?? opened).then(
            (written) =>
              written !== undefined
                ? []
                : [
                    'outcomes not recorded in the ledger: a later attempt or the audit wrote the block since',
                  ],
            (error: unknown) => [
              `outcomes not recorded in the ledger (it says ${prepared === undefined ? 'SENDING' : 'PREPARED'}, which a keyed retry settles): ${String(error)}`,
            ],
          );
    return { final, recorded };
  }

  return { sendAndRecord };
}

/**
 * A resend's outcome, given what earlier attempts left: after an UNKNOWN, only ACKED is news. A
 * resend refused or never sent says nothing about the earlier copy, which may be in the log.
 */
function resent(planned: PlannedRecord, now: RecordOutcome): RecordOutcome {
  const earlier = planned.mayHaveLanded;
  if (earlier === undefined || now.status === 'ACKED' || now.status === 'UNKNOWN') return now;
  return {
    status: 'UNKNOWN',
    message: `an earlier attempt may have written it (${'message' in earlier ? earlier.message : 'no answer'}); this one: ${now.status}, ${now.message}`,
  };
}

/** The audit voided this request's seqs (it sent nothing before its horizon): they stay unsent. */
export function voidedError(request: PublishRequest, firstSeq: number): TallyError {
  const what = `seqs from ${firstSeq} of stream ${request.stream} were voided by the audit (allocated long ago, never sent); nothing was sent`;
  return request.idempotencyKey === undefined
    ? new DependencyUnavailableError(`${what}; retry`, { retryAfterSeconds: 1 })
    : new UnprocessableInputError(`Idempotency-Key: ${what}; retry with a new key`, {
        field: 'Idempotency-Key',
      });
}
