// GET /v3/clusters/{cluster_id}/records/lookup?stream=S&seq=N | ?idempotency_key=K — what the
// ledger knows about a record: where it landed, or what happened to it (seed 003's question):
// ACKED, FAILED, NOT_SENT, UNKNOWN or VOID; or that the seq was never allocated (404); or that
// its fate is past the ledger's retention (410, with the day it expired).

import type { LedgerBlock } from '../core/publish/ports.js';
import { Deadline } from '../core/shared/deadline.js';
import { InvalidInputError, NotFoundError } from '../core/shared/errors.js';
import { httpHandler, json } from '../platform/http.js';
import { pathParameter } from '../platform/http-event.js';
import { checkCluster, checkIdempotencyKey, checkStream } from '../publishing/checks.js';
import { expired, unrecorded } from './lookup-fates.js';
import { lookupRuntime } from './lookup-runtime.js';
import { type StillOpen, settledForLookup } from './lookup-settle.js';

const PENDING_VOID = {
  status: 'UNKNOWN',
  message:
    'an audit is recording it VOID (never sent) and has not yet checked its range for a block ' +
    'written inside it: not final until an audit run confirms the range',
} as const;

function describe(block: LedgerBlock, from: number, to: number, open?: StillOpen) {
  const records = [];
  for (let seq = from; seq <= to; seq++) {
    const found = block.outcomes[seq - block.firstSeq];
    if (found === undefined) continue;
    // A VOID range not yet checked for blocks inside it is no final fate (ports.ts, pending).
    const outcome = block.pending ? PENDING_VOID : found;
    records.push({
      stream: block.stream,
      seq,
      topic_name: block.topic,
      outcome: outcome.status,
      ...(outcome.status === 'ACKED'
        ? { partition_id: outcome.partition, offset: Number(outcome.offset) }
        : {
            message:
              open && outcome.status === 'UNKNOWN'
                ? `${outcome.message}; ${open.message}`
                : outcome.message,
          }),
      ...(open?.definiteBy !== undefined &&
        outcome.status === 'UNKNOWN' && { definite_by: open.definiteBy }),
      session: block.session,
      ...(block.idempotencyKey !== undefined && { idempotency_key: block.idempotencyKey }),
    });
  }
  return records;
}

export const handler = httpHandler('read', async (event, context) => {
  const rt = await lookupRuntime();
  const deadline = Deadline.compute({
    now: Date.now(),
    gatewayTimeoutMs: rt.config.gatewayTimeoutMs,
    lambdaRemainingMs: context?.getRemainingTimeInMillis?.(),
    marginMs: rt.config.deadlineMarginMs,
    clientTimeoutMs: undefined,
  });
  await checkCluster(rt, pathParameter(event, 'cluster_id'), deadline);
  const query = event.queryStringParameters ?? {};
  if (query.idempotency_key !== undefined) {
    checkIdempotencyKey(query.idempotency_key, 'idempotency_key');
    const reservation = await rt.keyed.get(query.idempotency_key);
    const block = reservation && (await rt.ledger.find(reservation.stream, reservation.firstSeq));
    if (reservation && !block) {
      const { stream, firstSeq } = reservation;
      const gone = await expired(
        rt.ledger,
        stream,
        firstSeq,
        await rt.counter.read(stream),
        'idempotency_key',
      );
      if (gone) throw gone;
      const last = firstSeq + reservation.count - 1;
      // The key took seqs and no block holds them yet: a fast-path request whose outcome write
      // after the send failed or was cut by its deadline (the answer said UNKNOWN), or one still
      // in flight. Not "never published": its records may be in the log.
      throw new NotFoundError(
        `idempotency_key: key ${query.idempotency_key} took seqs ${firstSeq}..${last} of stream ${stream}, which have no ledger record yet: its request is in flight, or its ledger write after the send failed (its records may be in the log; the audit places them from it past TALLY_AUDIT_HORIZON_SECONDS, or a retry with this key settles them); ask again after the next audit`,
        { field: 'idempotency_key' },
      );
    }
    if (!reservation || !block) {
      throw new NotFoundError(
        `idempotency_key: no record was published with key ${query.idempotency_key}`,
        {
          field: 'idempotency_key',
        },
      );
    }
    const last = reservation.firstSeq + reservation.count - 1;
    const found = await settledForLookup(rt.settling, block, deadline);
    return json(200, {
      kind: 'TallyRecordLookup',
      records: describe(found.block, reservation.firstSeq, last, found.open),
    });
  }
  const { stream, seq: seqText } = query;
  // Digits only: Number() would also take '1e2', '0x10' and ' 7'.
  const seq = seqText !== undefined && /^[0-9]{1,16}$/.test(seqText) ? Number(seqText) : Number.NaN;
  if (stream === undefined || stream === '') {
    throw new InvalidInputError('stream: required with seq (or give idempotency_key)', {
      field: 'stream',
    });
  }
  checkStream(stream, 'stream');
  if (!Number.isSafeInteger(seq) || seq < 1) {
    throw new InvalidInputError('seq: required, a positive integer', { field: 'seq' });
  }
  const block = await rt.ledger.find(stream, seq);
  if (!block) {
    const counter = await rt.counter.read(stream);
    throw (
      (await expired(rt.ledger, stream, seq, counter, 'seq')) ??
      new NotFoundError(unrecorded(stream, seq, counter), { field: 'seq' })
    );
  }
  const found = await settledForLookup(rt.settling, block, deadline);
  return json(200, {
    kind: 'TallyRecordLookup',
    records: describe(found.block, seq, seq, found.open),
  });
});
