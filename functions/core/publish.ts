import type { Deadline } from './deadline.js';
import {
  DependencyUnavailableError,
  NotFoundError,
  type TallyError,
  UnprocessableInputError,
} from './errors.js';
import { isRetriable, type RecordOutcome } from './outcomes.js';
import {
  checkRecord,
  checkTopic,
  choosePartition,
  fingerprint,
  type PlannedRecord,
  stamp,
} from './publish-plan.js';
import type {
  Ledger,
  LedgerBlock,
  RecordSender,
  Reservation,
  Reservations,
  SequenceAllocator,
  TopicCatalog,
} from './publish-ports.js';
import type { RecordInput } from './record-input.js';

/** Kept back from the send for the DynamoDB writes that follow it (a few ms each when healthy). */
const AFTER_SEND_MS = 250;

export interface PublishRequest {
  readonly topic: string;
  readonly stream: string;
  readonly idempotencyKey: string | undefined;
  /** Parsed records, or why a record could not be parsed (reported in its place). */
  readonly records: ReadonlyArray<RecordInput | TallyError>;
  readonly deadline: Deadline;
  readonly now: number;
  /** `fingerprint(request)`, when the caller has already computed it (it hashes every record). */
  readonly fingerprint?: string;
}

export type RecordResult =
  | { readonly kind: 'rejected'; readonly error: TallyError }
  | {
      readonly kind: 'published';
      readonly input: RecordInput;
      readonly seq: number;
      readonly partition: number;
      readonly timestamp: number;
      readonly outcome: RecordOutcome;
    };

export interface PublishResult {
  readonly topic: string;
  readonly stream: string;
  readonly results: readonly RecordResult[];
  /** Problems that did not change any record's outcome (e.g. the final ledger write failed). */
  readonly warnings: readonly string[];
}

export interface PublisherPorts {
  readonly catalog: TopicCatalog;
  readonly sender: RecordSender;
  readonly allocator: SequenceAllocator;
  readonly ledger: Ledger;
  readonly reservations: Reservations;
  readonly allowTopic: (topic: string) => boolean;
}

export function createPublisher(ports: PublisherPorts) {
  /** Sequence numbers for the request: fresh ones, or those its Idempotency-Key already holds. */
  async function reserve(request: PublishRequest, count: number): Promise<Reservation> {
    const key = request.idempotencyKey;
    const fresh = async (print: string): Promise<Reservation> => ({
      idempotencyKey: key ?? '',
      fingerprint: print,
      stream: request.stream,
      topic: request.topic,
      count,
      timestamp: request.now,
      firstSeq: await ports.allocator.allocate(request.stream, count, request.deadline),
    });
    // Without a key nothing is compared later: skip hashing every record.
    if (key === undefined) return fresh('');
    const print = request.fingerprint ?? fingerprint(request);
    const stored =
      (await ports.reservations.get(key, request.deadline)) ??
      (await ports.reservations.putIfAbsent(await fresh(print), request.deadline));
    if (stored.fingerprint !== print || stored.count !== count) {
      throw new UnprocessableInputError(
        'Idempotency-Key: this key was already used for a different request (topic, stream or records differ)',
        { field: 'Idempotency-Key' },
      );
    }
    return stored;
  }

  /**
   * The block's first write, conditional so that seqs the audit has voided are never sent. When
   * it fails the request has seqs and sent nothing: without a key nothing will ever use them, so
   * they are recorded VOID if the deadline allows (else they stay a hole the audit voids later);
   * with a key the reservation keeps them for a retry.
   */
  async function open(request: PublishRequest, block: LedgerBlock): Promise<void> {
    let opened: 'opened' | 'voided';
    try {
      opened = await ports.ledger.open(block, request.deadline);
    } catch (error) {
      if (request.idempotencyKey === undefined) {
        const message = 'allocated; the first ledger write failed, nothing was sent';
        const outcomes = block.outcomes.map((): RecordOutcome => ({ status: 'VOID', message }));
        await ports.ledger.void({ ...block, outcomes }, request.deadline).catch(() => false);
      }
      throw error;
    }
    if (opened === 'voided') throw voidedError(request, block.firstSeq);
  }

  /** Ledger first (UNKNOWN), then the send, then the outcomes: no record in flight unrecorded. */
  async function sendAndRecord(
    request: PublishRequest,
    firstSeq: number,
    planned: readonly PlannedRecord[],
    warnings: string[],
  ): Promise<RecordOutcome[]> {
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
    await open(
      request,
      block(
        planned.map((p) => p.kept ?? inFlight),
        session,
      ),
    );
    const toSend = planned.filter((p) => p.kept === undefined);
    const sent = await ports.sender.send(
      request.topic,
      toSend.map((p) => ({
        partition: p.partition,
        key: p.input.key?.bytes ?? null,
        value: p.input.value?.bytes ?? null,
        headers: stamp(p.input, request, p.seq),
        timestamp: p.timestamp,
      })),
      // Time is kept back for the writes after the send (outcomes, the idempotency record): the
      // deadline bounds them too, and a send that took all of it would leave them none.
      request.deadline.less(Math.min(AFTER_SEND_MS, request.deadline.remainingMs() / 5)),
    );
    const outcomes = new Map(toSend.map((p, i) => [p.seq, sent.outcomes[i] ?? inFlight]));
    const final = planned.map((p) => p.kept ?? outcomes.get(p.seq) ?? inFlight);
    try {
      await ports.ledger.write(block(final, sent.session), request.deadline);
    } catch (error) {
      warnings.push(
        `outcomes not recorded in the ledger (it still says UNKNOWN): ${String(error)}`,
      );
    }
    return final;
  }

  async function publish(request: PublishRequest): Promise<PublishResult> {
    checkTopic(request.topic, ports.allowTopic);
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
      return {
        topic: request.topic,
        stream: request.stream,
        warnings,
        results: checked.map((error) => ({ kind: 'rejected', error: error as TallyError })),
      };
    }

    const reservation = await reserve(request, accepted.length);
    const previous =
      request.idempotencyKey === undefined
        ? undefined
        : await ports.ledger.find(request.stream, reservation.firstSeq, request.deadline);
    if (previous?.outcomes.some((o) => o.status === 'VOID')) {
      throw voidedError(request, reservation.firstSeq);
    }
    const planned: PlannedRecord[] = accepted.map((input, i) => {
      const before = previous?.outcomes[i];
      return {
        input,
        seq: reservation.firstSeq + i,
        partition: choosePartition(input, topic, reservation.firstSeq + i),
        timestamp: input.timestamp ?? reservation.timestamp,
        // A retry keeps what cannot change: written records, and refusals a resend would repeat.
        kept: before && (before.status === 'ACKED' || !isRetriable(before)) ? before : undefined,
      };
    });
    const final = planned.some((p) => p.kept === undefined)
      ? await sendAndRecord(request, reservation.firstSeq, planned, warnings)
      : planned.map((p) => p.kept as RecordOutcome);

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
    return { topic: request.topic, stream: request.stream, results, warnings };
  }

  return { publish };
}

/** The audit voided this request's seqs (it sent nothing before its horizon): they stay unsent. */
function voidedError(request: PublishRequest, firstSeq: number): TallyError {
  const what = `seqs from ${firstSeq} of stream ${request.stream} were voided by the audit (allocated long ago, never sent); nothing was sent`;
  return request.idempotencyKey === undefined
    ? new DependencyUnavailableError(`${what}; retry`, { retryAfterSeconds: 1 })
    : new UnprocessableInputError(`Idempotency-Key: ${what}; retry with a new key`, {
        field: 'Idempotency-Key',
      });
}
