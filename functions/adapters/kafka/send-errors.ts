import type { RecordOutcome } from '../../core/shared/outcomes.js';

// What a kafkajs send failure means for the records in it. The safe direction is UNKNOWN: the
// audit resolves an UNKNOWN from the log, while a wrong FAILED or NOT_SENT would hide a write.

/** The broker refused the batch: nothing of it was appended. */
const REFUSALS = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
  'CORRUPT_MESSAGE',
  'INVALID_TIMESTAMP',
  'INVALID_REQUIRED_ACKS',
  'TOPIC_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'POLICY_VIOLATION',
  'UNSUPPORTED_FOR_MESSAGE_FORMAT',
  'NOT_ENOUGH_REPLICAS',
  'NOT_LEADER_FOR_PARTITION',
  'NOT_LEADER_OR_FOLLOWER',
  'UNKNOWN_TOPIC_OR_PARTITION',
]);

/** The producer's session is broken: it must be replaced (new producer id, new session). */
const FATAL = new Set([
  'UNKNOWN_PRODUCER_ID',
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'INVALID_PRODUCER_EPOCH',
  'INVALID_PRODUCER_ID_MAPPING',
]);

interface KafkaJsErrorShape {
  readonly name?: string;
  readonly type?: string;
  readonly message?: string;
  readonly cause?: unknown;
}

/** The innermost error, through KafkaJSNumberOfRetriesExceeded and friends. */
function rootCause(error: unknown): KafkaJsErrorShape {
  let current = error as KafkaJsErrorShape;
  for (let depth = 0; depth < 5 && current?.cause && typeof current.cause === 'object'; depth++) {
    current = current.cause as KafkaJsErrorShape;
  }
  return current ?? {};
}

export interface SendFailure {
  readonly outcome: RecordOutcome;
  /** Replace the producer before the next send. */
  readonly replaceProducer: boolean;
}

export function classifySendFailure(error: unknown, partitionCount: number): SendFailure {
  const root = rootCause(error);
  const type = root.type ?? root.name ?? 'UNKNOWN_ERROR';
  const message = `${type}: ${root.message ?? String(error)}`;
  if (root.name === 'KafkaJSMetadataNotLoaded' || root.name === 'KafkaJSTopicMetadataNotLoaded') {
    return { outcome: { status: 'NOT_SENT', message }, replaceProducer: true };
  }
  if (FATAL.has(type)) {
    return { outcome: { status: 'UNKNOWN', message }, replaceProducer: true };
  }
  // One partition's batch refused on the first answer means it was not written. After retries
  // an earlier attempt may have landed (a resend can be refused by the ISR check before the
  // duplicate check), and with several partitions kafkajs does not say which one was refused:
  // both stay UNKNOWN.
  const retried =
    (error as KafkaJsErrorShape | undefined)?.name === 'KafkaJSNumberOfRetriesExceeded';
  if (REFUSALS.has(type) && partitionCount === 1 && !retried) {
    return {
      outcome: { status: 'FAILED', kafkaError: type, message },
      replaceProducer: type === 'UNKNOWN_TOPIC_OR_PARTITION',
    };
  }
  return { outcome: { status: 'UNKNOWN', message }, replaceProducer: true };
}
