// GET /v3/clusters/{cluster_id}/records/lookup?stream=S&seq=N | ?idempotency_key=K — what the
// ledger knows about a record: where it landed, or what happened to it (seed 003's question):
// ACKED, FAILED, NOT_SENT, UNKNOWN or VOID; or that the seq was never allocated (404); or that
// its fate is past the ledger's retention (410, with the day it expired).

import type { Ledger, LedgerBlock } from '../core/publish/ports.js';
import { GoneError, InvalidInputError, NotFoundError } from '../core/shared/errors.js';
import { httpHandler, json } from '../platform/http.js';
import { pathParameter } from '../platform/http-event.js';
import { checkCluster, checkIdempotencyKey, checkStream } from '../publishing/checks.js';
import { lookupRuntime } from './lookup-runtime.js';

function describe(block: LedgerBlock, from: number, to: number) {
  const records = [];
  for (let seq = from; seq <= to; seq++) {
    const outcome = block.outcomes[seq - block.firstSeq];
    if (outcome === undefined) continue;
    records.push({
      stream: block.stream,
      seq,
      topic_name: block.topic,
      outcome: outcome.status,
      ...(outcome.status === 'ACKED'
        ? { partition_id: outcome.partition, offset: Number(outcome.offset) }
        : { message: outcome.message }),
      session: block.session,
      ...(block.idempotencyKey !== undefined && { idempotency_key: block.idempotencyKey }),
    });
  }
  return records;
}

/** Why the ledger has no fate for `seq`: never allocated, or allocated and not recorded yet. */
function unrecorded(stream: string, seq: number, counter: { lastSeq: number } | undefined) {
  const last = counter?.lastSeq ?? 0;
  if (last === 0)
    return `seq: ${seq} was never allocated: stream ${stream} has allocated no seqs (nothing was published to it); check the stream name (a topic's own stream is its name)`;
  return seq > last
    ? `seq: ${seq} was never allocated (stream ${stream} has allocated 1..${last})`
    : `seq: ${seq} of stream ${stream} was allocated and has no ledger record yet: its request is in flight, or never sent it (the audit records it VOID)`;
}

/**
 * A GoneError when `seq`, allocated on `counter`, is below what the ledger keeps of the stream;
 * undefined when it is not (never allocated, or not recorded yet).
 */
async function expired(
  ledger: Ledger,
  stream: string,
  seq: number,
  counter: { lastSeq: number; updatedAt: number } | undefined,
  field: string,
): Promise<GoneError | undefined> {
  if (counter === undefined || seq > counter.lastSeq || ledger.retention === undefined) return;
  const retention = await ledger.retention(stream, counter);
  if (seq >= retention.keptFrom) return;
  const { day, exact } = retention.expiredOn(seq);
  return new GoneError(
    `${field}: the fate of seq ${seq} of stream ${stream} is no longer kept: its ledger record expired ${exact ? 'on' : 'on or before'} ${day} (TALLY_LEDGER_RETENTION_DAYS); the audit reports of that time still count it`,
    { field },
  );
}

export const handler = httpHandler('read', async (event) => {
  const rt = await lookupRuntime();
  await checkCluster(rt, pathParameter(event, 'cluster_id'));
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
    return json(200, {
      kind: 'TallyRecordLookup',
      records: describe(block, reservation.firstSeq, last),
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
  return json(200, { kind: 'TallyRecordLookup', records: describe(block, seq, seq) });
});
