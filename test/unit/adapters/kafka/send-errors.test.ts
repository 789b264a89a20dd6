import {
  KafkaJSConnectionError,
  KafkaJSMetadataNotLoaded,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSRequestTimeoutError,
  KafkaJSTopicMetadataNotLoaded,
} from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { classifySendFailure } from '../../../../functions/adapters/kafka/send-errors.js';
import type { RecordOutcome } from '../../../../functions/core/shared/outcomes.js';

// kafkajs's .d.ts declares fewer constructor arguments than its classes take and its own code
// passes; these views allow the real calls.
const NonRetriableError = KafkaJSNonRetriableError as unknown as new (
  e: Error,
  metadata: { cause: Error },
) => KafkaJSNonRetriableError;
const MetadataNotLoaded = KafkaJSMetadataNotLoaded as unknown as new (
  e: string,
) => KafkaJSMetadataNotLoaded;

function messageOf(outcome: RecordOutcome): string {
  return outcome.status === 'ACKED' ? '' : outcome.message;
}

// Broker error codes as kafkajs knows them (node_modules/kafkajs/src/protocol/error.js).
const BROKER_ERRORS = {
  MESSAGE_TOO_LARGE: { code: 10, retriable: false },
  INVALID_TIMESTAMP: { code: 32, retriable: false },
  NOT_ENOUGH_REPLICAS: { code: 19, retriable: true },
  UNKNOWN_TOPIC_OR_PARTITION: { code: 3, retriable: true },
  TOPIC_AUTHORIZATION_FAILED: { code: 29, retriable: false },
  OUT_OF_ORDER_SEQUENCE_NUMBER: { code: 45, retriable: false },
  INVALID_PRODUCER_EPOCH: { code: 47, retriable: false },
  UNKNOWN_PRODUCER_ID: { code: 59, retriable: false },
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: { code: 20, retriable: true },
  REQUEST_TIMED_OUT: { code: 7, retriable: true },
} as const;

type BrokerErrorType = keyof typeof BROKER_ERRORS;

/** A KafkaJSProtocolError as kafkajs builds it from a produce response's error code. */
function protocolError(type: BrokerErrorType): KafkaJSProtocolError {
  const { code, retriable } = BROKER_ERRORS[type];
  // kafkajs builds these from an error-code entry; its .d.ts only admits Error | string.
  const entry = { type, code, retriable, message: `broker says ${type.toLowerCase()}` };
  return new KafkaJSProtocolError(entry as unknown as Error);
}

/** What kafkajs's retrier rejects with once a retriable error outlived its retries. */
function afterRetries(cause: Error): KafkaJSNumberOfRetriesExceeded {
  return new KafkaJSNumberOfRetriesExceeded(cause, { retryCount: 5, retryTime: 2000 });
}

describe('classifySendFailure: broker refusals', () => {
  it.each([
    ['MESSAGE_TOO_LARGE', 'bare', (type: BrokerErrorType) => protocolError(type)],
    ['INVALID_TIMESTAMP', 'bare', (type: BrokerErrorType) => protocolError(type)],
    ['TOPIC_AUTHORIZATION_FAILED', 'bare', (type: BrokerErrorType) => protocolError(type)],
    [
      'INVALID_TIMESTAMP',
      'wrapped as non-retriable',
      (type: BrokerErrorType) => {
        const cause = protocolError(type);
        return new NonRetriableError(cause, { cause });
      },
    ],
  ] as const)('%s (%s) on one partition is FAILED with that kafkaError', (type, _how, build) => {
    const failure = classifySendFailure(build(type), 1);

    expect(failure.outcome.status).toBe('FAILED');
    expect(failure.outcome).toMatchObject({ status: 'FAILED', kafkaError: type });
    expect(messageOf(failure.outcome)).toContain(type);
    expect(messageOf(failure.outcome)).toContain(`broker says ${type.toLowerCase()}`);
    expect(failure.replaceProducer).toBe(false);
  });

  it.each(['NOT_ENOUGH_REPLICAS', 'UNKNOWN_TOPIC_OR_PARTITION', 'MESSAGE_TOO_LARGE'] as const)(
    '%s after retries on one partition is UNKNOWN: an earlier attempt may have landed',
    (type) => {
      const failure = classifySendFailure(afterRetries(protocolError(type)), 1);
      expect(failure.outcome.status).toBe('UNKNOWN');
      expect(messageOf(failure.outcome)).toContain(type);
      expect(failure.replaceProducer).toBe(true);
    },
  );

  it('UNKNOWN_TOPIC_OR_PARTITION on its first answer is FAILED and retires the producer', () => {
    const failure = classifySendFailure(protocolError('UNKNOWN_TOPIC_OR_PARTITION'), 1);
    expect(failure.outcome).toMatchObject({
      status: 'FAILED',
      kafkaError: 'UNKNOWN_TOPIC_OR_PARTITION',
    });
    expect(failure.replaceProducer).toBe(true);
  });

  it.each(['MESSAGE_TOO_LARGE', 'INVALID_TIMESTAMP', 'NOT_ENOUGH_REPLICAS'] as const)(
    '%s over two partitions is UNKNOWN: kafkajs does not say which partition',
    (type) => {
      const failure = classifySendFailure(afterRetries(protocolError(type)), 2);

      expect(failure.outcome.status).toBe('UNKNOWN');
      expect(failure.outcome).not.toHaveProperty('kafkaError');
      expect(messageOf(failure.outcome)).toContain(type);
      expect(failure.replaceProducer).toBe(true);
    },
  );

  it.each(['NOT_ENOUGH_REPLICAS_AFTER_APPEND', 'REQUEST_TIMED_OUT'] as const)(
    '%s (may have been appended) is UNKNOWN even on one partition',
    (type) => {
      const failure = classifySendFailure(afterRetries(protocolError(type)), 1);

      expect(failure.outcome.status).toBe('UNKNOWN');
      expect(messageOf(failure.outcome)).toContain(type);
    },
  );
});

describe('classifySendFailure: fatal producer errors', () => {
  it.each([
    'UNKNOWN_PRODUCER_ID',
    'OUT_OF_ORDER_SEQUENCE_NUMBER',
    'INVALID_PRODUCER_EPOCH',
  ] as const)('%s is UNKNOWN and replaces the producer, bare or wrapped', (type) => {
    for (const error of [protocolError(type), afterRetries(protocolError(type))]) {
      for (const partitions of [1, 3]) {
        const failure = classifySendFailure(error, partitions);

        expect(failure.outcome.status).toBe('UNKNOWN');
        expect(messageOf(failure.outcome)).toContain(type);
        expect(failure.replaceProducer).toBe(true);
      }
    }
  });
});

describe('classifySendFailure: client-side failures', () => {
  it('metadata not loaded is NOT_SENT (nothing left the client)', () => {
    const failure = classifySendFailure(new MetadataNotLoaded('Metadata not loaded'), 1);

    expect(failure.outcome.status).toBe('NOT_SENT');
    expect(messageOf(failure.outcome)).toContain('KafkaJSMetadataNotLoaded');
    expect(messageOf(failure.outcome)).toContain('Metadata not loaded');
  });

  it('topic metadata not loaded, after retries, is NOT_SENT', () => {
    const cause = new KafkaJSTopicMetadataNotLoaded('Topic metadata not loaded', {
      topic: 'orders',
    });
    const failure = classifySendFailure(afterRetries(cause), 2);

    expect(failure.outcome.status).toBe('NOT_SENT');
    expect(messageOf(failure.outcome)).toContain('KafkaJSTopicMetadataNotLoaded');
  });

  it.each([
    [
      'KafkaJSRequestTimeoutError',
      () => new KafkaJSRequestTimeoutError('Request Produce(key: 0, version: 7) timed out'),
    ],
    [
      'KafkaJSRequestTimeoutError',
      () => afterRetries(new KafkaJSRequestTimeoutError('Request Produce timed out')),
    ],
    [
      'KafkaJSConnectionError',
      () => new KafkaJSConnectionError('Connection error: ECONNREFUSED', { broker: 'b-1:9092' }),
    ],
    [
      'KafkaJSConnectionError',
      () => afterRetries(new KafkaJSConnectionError('Connection timeout')),
    ],
    ['Error', () => new Error('something odd')],
    ['TypeError', () => new TypeError('cannot read properties of undefined')],
  ] as const)(
    '%s is UNKNOWN, replaces the producer, and is named in the message',
    (name, build) => {
      for (const partitions of [1, 2]) {
        const failure = classifySendFailure(build(), partitions);

        expect(failure.outcome.status).toBe('UNKNOWN');
        expect(messageOf(failure.outcome).startsWith(`${name}: `)).toBe(true);
        expect(failure.replaceProducer).toBe(true);
      }
    },
  );

  it('a thrown non-Error value is UNKNOWN and still described', () => {
    const failure = classifySendFailure('socket hang up', 1);

    expect(failure.outcome.status).toBe('UNKNOWN');
    expect(messageOf(failure.outcome)).toContain('socket hang up');
    expect(failure.replaceProducer).toBe(true);
  });

  it.each([null, undefined])('%s is UNKNOWN and replaces the producer', (value) => {
    const failure = classifySendFailure(value, 1);

    expect(failure.outcome.status).toBe('UNKNOWN');
    expect(messageOf(failure.outcome)).toContain('UNKNOWN_ERROR');
    expect(failure.replaceProducer).toBe(true);
  });
});
