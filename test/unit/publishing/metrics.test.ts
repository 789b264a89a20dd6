import { describe, expect, it } from 'vitest';
import type { PublishResult, RecordResult } from '../../../functions/core/publish/ports.js';
import { InvalidInputError } from '../../../functions/core/shared/errors.js';
import { publishRequestMetrics } from '../../../functions/publishing/metrics.js';
import { emittedMetrics } from '../../helpers/emf.js';

const published = (outcome: Extract<RecordResult, { kind: 'published' }>['outcome']) =>
  ({
    kind: 'published',
    input: {
      partition: undefined,
      key: undefined,
      value: undefined,
      headers: [],
      timestamp: undefined,
    },
    seq: 1,
    partition: 0,
    timestamp: 0,
    outcome,
  }) as unknown as RecordResult;

describe('publish metrics', () => {
  it('count one request’s records by outcome, beside its latency, in one document', () => {
    const result: PublishResult = {
      topic: 'orders',
      stream: 'orders',
      warnings: [],
      results: [
        published({ status: 'ACKED', partition: 0, offset: '1' }),
        published({ status: 'ACKED', partition: 0, offset: '2' }),
        published({ status: 'UNKNOWN', message: 'timed out' }),
        published({ status: 'FAILED', kafkaError: 'MESSAGE_TOO_LARGE', message: 'too large' }),
        { kind: 'rejected', error: new InvalidInputError('value: required', { field: 'value' }) },
      ],
    };
    const blobs = emittedMetrics(() => publishRequestMetrics(result, 12.5));
    expect(blobs).toHaveLength(1);
    expect(blobs[0]).toMatchObject({
      topic: 'orders',
      service: 'publish',
      RecordsAcked: 2,
      RecordsUnknown: 1,
      RecordsFailed: 1,
      RecordsNotSent: 0,
      RecordsRefused: 1,
      PublishLatency: 12.5,
    });
    // The next request's document carries its own topic only.
    const next = emittedMetrics(() => publishRequestMetrics({ ...result, topic: 'payments' }, 1));
    expect(next[0]?.topic).toBe('payments');
  });
});
