import { NotFoundError, type TallyError } from '../shared/errors.js';
import { isRetriable, isSettled, type RecordOutcome } from '../shared/outcomes.js';
import { createKeyRules, LostKeyRace } from './key-rules.js';
import {
  checkRecord,
  checkTopic,
  choosePartition,
  fingerprint,
  type PlannedRecord,
} from './plan.js';
import type {
  Answered,
  KeyedPublish,
  LedgerBlock,
  PublisherPorts,
  PublishRequest,
  PublishResult,
  RecordResult,
  Shape,
} from './ports.js';
import type { RecordInput } from './record.js';
import { createSendStep, voidedError } from './send-step.js';
import { settleTxnBlock, unsettledTxn } from './txn-settle.js';

/** How far two containers' clocks may differ, the audit's and a publisher's (Lambda's are NTP-synced). */
const CLOCK_SKEW_MS = 2000;

/** Every outcome final (or refused before a seq): the answer a key may replay forever. */
export function isSettledResult(result: PublishResult): boolean {
  return result.results.every((r) => r.kind === 'rejected' || isSettled(r.outcome));
}

// The DynamoDB round trips of a publish, in order (calls in one step run side by side):
//
//   no key               [allocate] · [send] · ledger outcomes
//   key, first attempt   claim · [send] · ledger outcomes ∥ key answer          (seqs leased)
//                        key get · allocate · claim · [send] · outcomes ∥ answer  (otherwise)
//   key, answered        key get (the stored answer; nothing else), or a failed claim and its read
//   key, unsettled retry key get · key lock ∥ ledger find · ledger open · [send] ·
//                        ledger outcomes ∥ key answer
//
// The allocation is the write-ahead record: the counter says the seqs were handed out, so a
// seq at or below it with no ledger block is in flight or lost on the way, and the audit of the
// stream's home topic looks for it in the log before recording it VOID (found: UNKNOWN, then
// settled). That holds only while the audit cannot judge the seq yet, so a request sends before
// any ledger write only when it ends within the audit's horizon of the allocation, and only to
// the stream's home topic (the first it allocated for: the audit that looks there). Otherwise —
// a horizon of 0, another topic, a retry of an unsettled key — the ledger block is opened first
// (UNKNOWN), conditional on no VOID there, as before.
//
// [allocate] is no round trip when the container holds a lease of the stream's seqs
// (core/publish/seq-leases.ts). One item per Idempotency-Key holds the reservation (seqs), the lock
// (until the holder's deadline, after which it can send nothing) and the stored answer. A lost
// race for a key leaves the loser's seqs unsent: back to the lease, or a hole the audit voids.

export function createPublisher(ports: PublisherPorts) {
  const { conflict, mismatch, keyedState, finish, release } = createKeyRules(ports.keyed);
  const { sendAndRecord } = createSendStep(ports);

  async function publishAnswered<T>(
    request: PublishRequest,
    shape: Shape<T>,
    /** The key's item, when a claim already read it: asked again without a first claim. */
    known?: KeyedPublish,
  ): Promise<Answered<T>> {
    checkTopic(request.topic, ports.allowTopic);
    const key = request.idempotencyKey;
    // Without a key nothing is compared later: skip hashing every record.
    const print = key === undefined ? '' : (request.fingerprint ?? fingerprint(request));
    // With leased seqs at hand a key's first question is its claim (a first attempt's only
    // write before the send); otherwise its item is read first, so a replay allocates nothing.
    const claimFirst =
      key !== undefined &&
      known === undefined &&
      (ports.allocator.peek?.(request.stream, request.records.length, request.deadline) ?? false);
    const { stored, replay } = claimFirst ? {} : await keyedState<T>(request, print, known);
    if (replay) return replay;

    const topic = await ports.catalog.describe(request.topic, request.deadline);
    if (topic === undefined) {
      throw new NotFoundError(`topic_name: topic ${request.topic} does not exist`, {
        field: 'topic_name',
        errorCode: 40403,
      });
    }
    const checked = request.records.map((record, i) =>
      'headers' in record ? checkRecord(record, topic, i, request) : record,
    );
    const accepted = checked.filter((r): r is RecordInput => 'headers' in r);
    const warnings: string[] = [];
    if (accepted.length === 0) {
      // Nothing allocated, nothing stored: a retry finds the same refusals.
      const result: PublishResult = {
        topic: request.topic,
        stream: request.stream,
        warnings,
        results: checked.map((error) => ({ kind: 'rejected', error: error as TallyError })),
      };
      return { answer: shape(result).answer, replayed: false, warnings };
    }
    if (stored !== undefined && stored.count !== accepted.length) throw mismatch();

    // The lock this request holds on its key (its deadline), once it holds one.
    let held: number | undefined;
    const until = request.deadline.at;
    let firstSeq: number;
    let timestamp = request.now;
    let previous: LedgerBlock | undefined;
    let claim: (() => Promise<void>) | undefined;
    // The ledger block is opened before the send (see the plan above), unless this is false.
    let ledgerFirst = true;
    // When the seqs were allocated (a retry: no later than its first attempt's start).
    let allocatedAt: number;
    if (stored !== undefined && key !== undefined) {
      // A retry of an attempt that ended unsettled (or died): its seqs, under a fresh lock.
      const [locked, found] = await Promise.allSettled([
        ports.keyed.lock(key, stored.lockedUntil, until, request.deadline),
        ports.ledger.find(request.stream, stored.firstSeq, request.deadline),
      ]);
      if (locked.status === 'fulfilled' && locked.value) held = until;
      try {
        if (locked.status === 'rejected') throw locked.reason;
        if (!locked.value) throw conflict();
        if (found.status === 'rejected') throw found.reason;
        previous = found.value;
        // An earlier transactional attempt in doubt or dead: made definite before anything else.
        if (ports.transactions !== undefined && unsettledTxn(previous)) {
          previous = await settleTxnBlock(
            { ledger: ports.ledger, transactions: ports.transactions },
            previous,
            request.deadline,
          );
        }
      } catch (error) {
        await release(request, held);
        throw error;
      }
      firstSeq = stored.firstSeq;
      timestamp = stored.timestamp;
      allocatedAt = stored.timestamp;
    } else {
      const allocation = await ports.allocator.allocate(
        request.stream,
        accepted.length,
        request.topic,
        request.deadline,
      );
      firstSeq = allocation.firstSeq;
      allocatedAt = allocation.allocatedAt;
      ledgerFirst = !(
        allocation.homeTopic === request.topic &&
        request.deadline.at <= allocation.allocatedAt + ports.auditHorizonMs
      );
      if (key !== undefined) {
        const mine: KeyedPublish = {
          idempotencyKey: key,
          fingerprint: print,
          stream: request.stream,
          topic: request.topic,
          count: accepted.length,
          timestamp,
          firstSeq,
          lockedUntil: until,
        };
        claim = async () => {
          const winner = await ports.keyed.claim(mine, request.deadline);
          if (winner.stream === mine.stream && winner.firstSeq === mine.firstSeq) {
            held = until;
            return;
          }
          // The key was used before (a claim asked first) or another first attempt got there
          // first: this one sends nothing.
          const giveBack = () =>
            ports.allocator.giveBack?.(request.stream, allocation, accepted.length);
          if (claimFirst) throw new LostKeyRace(mismatch(), giveBack, winner);
          throw new LostKeyRace(winner.fingerprint === print ? conflict() : mismatch(), giveBack);
        };
      }
    }

    try {
      if (previous?.outcomes.some((o) => o.status === 'VOID')) {
        throw voidedError(request, firstSeq);
      }
      // A retry whose earlier attempt left no ledger block at all: on the fast path it sent
      // before writing anything, and its outcome write may have been lost (chaos seed 109), so
      // its records may be in the log. A resend refused or not sent must not say otherwise.
      const unrecorded: RecordOutcome | undefined =
        stored !== undefined && previous === undefined
          ? { status: 'UNKNOWN', message: 'an earlier attempt left no outcome in the ledger' }
          : undefined;
      const planned: PlannedRecord[] = accepted.map((input, i) => {
        const before = previous?.outcomes[i] ?? unrecorded;
        const seq = firstSeq + i;
        const partition = choosePartition(input, topic, seq);
        const at = input.timestamp ?? timestamp;
        // A first attempt (nothing before): a literal, not a spread of an empty condition.
        if (before === undefined) return { input, seq, partition, timestamp: at, kept: undefined };
        return {
          input,
          seq,
          partition,
          timestamp: at,
          // A retry keeps what cannot change: written records, and refusals a resend would repeat.
          kept: before.status === 'ACKED' || !isRetriable(before) ? before : undefined,
          ...(before.status === 'UNKNOWN' && { mayHaveLanded: before }),
        };
      });
      const { final, recorded } = planned.some((p) => p.kept === undefined)
        ? await sendAndRecord({
            request,
            firstSeq,
            planned,
            claim,
            ledgerFirst,
            judgedFrom: allocatedAt + ports.auditHorizonMs - CLOCK_SKEW_MS,
          })
        : { final: planned.map((p) => p.kept as RecordOutcome), recorded: Promise.resolve([]) };

      let next = 0;
      const results: RecordResult[] = checked.map((record) => {
        if (!('headers' in record)) return { kind: 'rejected', error: record };
        const p = planned[next] as PlannedRecord;
        const outcome = final[next] as RecordOutcome;
        next++;
        return {
          kind: 'published',
          input: p.input,
          seq: p.seq,
          partition: p.partition,
          timestamp: p.timestamp,
          outcome,
        };
      });
      const result: PublishResult = {
        topic: request.topic,
        stream: request.stream,
        results,
        warnings,
      };
      const { answer, settled } = shape(result);
      // The outcome write and the key's answer (or the lock's release) side by side.
      await Promise.all([
        recorded.then((unrecorded) => {
          warnings.push(...unrecorded);
        }),
        finish(request, held, settled ? answer : undefined, warnings),
      ]);
      held = undefined;
      return { answer, replayed: false, warnings };
    } catch (error) {
      await release(request, held);
      // A claim asked first found the key's item: the request is answered from it (a replay,
      // a conflict, a retry of an unsettled attempt) as if it had been read first.
      if (error instanceof LostKeyRace && error.winner !== undefined) {
        return publishAnswered(request, shape, error.winner);
      }
      throw error;
    }
  }

  /**
   * The use case's own result, with no answer stored: with a key, every retry reuses the seqs
   * and keeps what cannot change (a transport stores its answer with `publishAnswered`).
   */
  async function publish(request: PublishRequest): Promise<PublishResult> {
    const { answer } = await publishAnswered(request, (result) => ({
      answer: result,
      settled: false,
    }));
    return answer;
  }

  return { publish, publishAnswered };
}
