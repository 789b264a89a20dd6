import type { Ledger } from '../core/publish/ports.js';
import { GoneError } from '../core/shared/errors.js';

// Why the lookup route finds no ledger fate for a seq: never allocated or not recorded yet (404),
// or recorded and past the ledger's retention (410, with the day it expired).

/** Why the ledger has no fate for `seq`: never allocated, or allocated and not recorded yet. */
export function unrecorded(stream: string, seq: number, counter: { lastSeq: number } | undefined) {
  const last = counter?.lastSeq ?? 0;
  if (last === 0)
    return `seq: ${seq} was never allocated: stream ${stream} has allocated no seqs (nothing was published to it); check the stream name (a topic's own stream is its name)`;
  return seq > last
    ? `seq: ${seq} was never allocated (stream ${stream} has allocated 1..${last})`
    : `seq: ${seq} of stream ${stream} was allocated and has no ledger record yet: its request is in flight, its ledger write after the send failed (the next audit places it from the log), or it was never sent (the audit records it VOID); ask again after the next audit`;
}

/**
 * A GoneError when `seq`, allocated on `counter`, is below what the ledger keeps of the stream;
 * undefined when it is not (never allocated, or not recorded yet).
 */
export async function expired(
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
