import { ConflictError, type TallyError, UnprocessableInputError } from '../shared/errors.js';
import type { Answered, KeyedPublish, KeyedPublishes, PublishRequest } from './ports.js';

// A publish's Idempotency-Key: what its item decides before anything is done (a replay, a
// conflict, a mismatch, or a retry of an unsettled attempt), and the answer stored at the end.

/** A first attempt's claim found the key taken by another request: its seqs go unsent. */
export class LostKeyRace extends Error {
  constructor(
    readonly error: TallyError,
    /** Hands the unsent seqs back to the lease they came from (none: a hole the audit voids). */
    readonly giveBack: () => void,
    /** The key's item, when the claim was the request's first question about the key. */
    readonly winner?: KeyedPublish,
  ) {
    super(error.message);
  }
}

export function createKeyRules(keyed: KeyedPublishes) {
  const conflict = () =>
    new ConflictError(
      'Idempotency-Key: a request with this key is still in progress; retry later',
      {
        field: 'Idempotency-Key',
        retryAfterSeconds: 1,
      },
    );
  const mismatch = () =>
    new UnprocessableInputError(
      'Idempotency-Key: this key was already used for a different request (topic, stream or records differ)',
      { field: 'Idempotency-Key' },
    );

  /** The key's item, when it decides the request before anything else is done. */
  async function keyedState<T>(
    request: PublishRequest,
    print: string,
    known: KeyedPublish | undefined,
  ): Promise<{ stored?: KeyedPublish; replay?: Answered<T> }> {
    const key = request.idempotencyKey;
    if (key === undefined) return {};
    const stored = known ?? (await keyed.get(key, request.deadline));
    if (stored === undefined) return {};
    if (stored.fingerprint !== print) throw mismatch();
    if (stored.answer !== undefined) {
      return { replay: { answer: stored.answer as T, replayed: true, warnings: [] } };
    }
    if (stored.lockedUntil > Date.now()) throw conflict();
    return { stored };
  }

  /** Stores the key's answer (or only frees its lock); a failure is a warning, not an error. */
  async function finish(
    request: PublishRequest,
    held: number | undefined,
    answer: unknown,
    warnings: string[],
  ): Promise<void> {
    const key = request.idempotencyKey;
    if (key === undefined || held === undefined) return;
    try {
      if (!(await keyed.finish(key, held, answer, request.deadline))) {
        warnings.push('Idempotency-Key: the lock was taken over; the answer was not stored');
      }
    } catch (error) {
      warnings.push(
        `Idempotency-Key: the answer was not stored (a retry runs again with the same seqs): ${String(error)}`,
      );
    }
  }

  /** Frees the key for a retry now rather than at this request's deadline (best effort). */
  async function release(request: PublishRequest, held: number | undefined): Promise<void> {
    const key = request.idempotencyKey;
    if (key === undefined || held === undefined) return;
    await keyed.finish(key, held, undefined, request.deadline).catch(() => false);
  }

  return { conflict, mismatch, keyedState, finish, release };
}
