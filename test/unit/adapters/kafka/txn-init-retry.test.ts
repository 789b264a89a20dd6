import {
  Kafka,
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSProtocolError,
} from 'kafkajs';
import Cluster from 'kafkajs/src/cluster/index.js';
import { describe, expect, it } from 'vitest';
import { withInitRetry } from '../../../../functions/adapters/kafka/init-retry.js';
import { fenceMayRetry } from '../../../../functions/adapters/kafka/txn-errors.js';
import { DeadlineExceeded } from '../../../../functions/core/shared/deadline.js';

// init-retry.ts: kafkajs's eosManager reads `cluster.retry` once, when it is made; the getter
// answers the retry given only while withInitRetry runs, undefined (kafkajs's own value) otherwise.

const retryOf = (cluster: object) => (cluster as { retry?: unknown }).retry;

describe('withInitRetry', () => {
  const RETRY = { retries: 3, initialRetryTime: 7 };

  it('answers the retry on a Cluster only while it runs, and undefined outside as before', () => {
    const prototype = (Cluster as unknown as { prototype: object }).prototype;
    const seen = withInitRetry(RETRY, () => retryOf(Object.create(prototype)));
    expect(seen).toBe(RETRY);
    expect(retryOf(Object.create(prototype))).toBeUndefined();
  });

  it('is undone when what it runs throws, and nests', () => {
    const prototype = (Cluster as unknown as { prototype: object }).prototype;
    expect(() =>
      withInitRetry(RETRY, () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(retryOf(Object.create(prototype))).toBeUndefined();
    const inner = { retries: 1 };
    const seen = withInitRetry(RETRY, () => [
      withInitRetry(inner, () => retryOf(Object.create(prototype))),
      retryOf(Object.create(prototype)),
    ]);
    expect(seen).toEqual([inner, RETRY]);
  });

  it('makes a real kafkajs producer without connecting (nothing else in kafkajs reads it)', () => {
    const kafka = new Kafka({ brokers: ['127.0.0.1:1'], logLevel: 0 });
    const producer = withInitRetry(RETRY, () => kafka.producer({ idempotent: true }));
    expect(producer.isIdempotent()).toBe(true);
  });
});

/** kafkajs's wrapper of a bailed error (its retrier passes `cause`; the types omit it). */
const bailed = (error: Error) =>
  Object.assign(new KafkaJSNonRetriableError(error), { cause: error });

describe('fenceMayRetry', () => {
  it('tries again after connection errors, coordinator moves and CONCURRENT_TRANSACTIONS', () => {
    const closed = new KafkaJSConnectionError('Connection error: ECONNREFUSED');
    expect(fenceMayRetry(closed)).toBe(true);
    expect(fenceMayRetry(bailed(closed))).toBe(true);
    expect(fenceMayRetry(new KafkaJSProtocolError('NOT_COORDINATOR_FOR_GROUP'))).toBe(true);
    const concurrent = Object.assign(new KafkaJSProtocolError('x'), {
      type: 'CONCURRENT_TRANSACTIONS',
      retriable: false,
    });
    expect(fenceMayRetry(concurrent)).toBe(true);
  });

  it('stops at the deadline and at answers Kafka marks final', () => {
    expect(fenceMayRetry(new DeadlineExceeded('late'))).toBe(false);
    const denied = Object.assign(new KafkaJSProtocolError('denied'), {
      type: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
      retriable: false,
    });
    expect(fenceMayRetry(bailed(denied))).toBe(false);
  });
});
