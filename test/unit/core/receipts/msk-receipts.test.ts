import type { MSKRecord } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { tallyReceipts } from '../../../../functions/consumer/tally-receipts.js';
import { receiptsFromMsk, toRuns } from '../../../../functions/core/receipts/msk-receipts.js';
import { parseReceipts } from '../../../../functions/core/receipts/receipts-input.js';
import {
  InvalidInputError,
  PayloadTooLargeError,
} from '../../../../functions/core/shared/errors.js';

const bytes = (text: string) => [...Buffer.from(text)];
function record(partition: number, offset: number, stream?: string, seq?: number): MSKRecord {
  const headers =
    stream === undefined
      ? []
      : [{ 'tally.stream': bytes(stream) }, { 'tally.seq': bytes(String(seq)) }];
  return {
    topic: 'orders',
    partition,
    offset,
    timestamp: 0,
    timestampType: 'CREATE_TIME',
    key: '',
    value: '',
    headers,
  };
}

describe('receipts from an MSK batch', () => {
  it('compresses seqs into runs in processing order, keeping a seq seen twice', () => {
    expect(toRuns([1, 2, 3, 7, 8, 2, 3])).toEqual([
      [1, 3],
      [7, 8],
      [2, 3],
    ]);
  });

  it('groups by topic and stream, with offsets per partition and untracked records counted', () => {
    const batches = receiptsFromMsk('billing', {
      'orders-0': [record(0, 10, 'orders', 1), record(0, 11, 'orders', 2), record(0, 12)],
      'orders-1': [record(1, 5, 'orders', 3), record(1, 6, 'invoices', 1)],
    });
    expect(batches).toEqual([
      {
        group: 'billing',
        stream: 'orders',
        topic: 'orders',
        seqs: [[1, 3]],
        offsets: [
          [0, 10, 11],
          [1, 5, 5],
        ],
        count: 3,
      },
      { group: 'billing', stream: '', topic: 'orders', seqs: [], offsets: [[0, 12, 12]], count: 1 },
      {
        group: 'billing',
        stream: 'invoices',
        topic: 'orders',
        seqs: [[1, 1]],
        offsets: [[1, 6, 6]],
        count: 1,
      },
    ]);
  });
});

describe('POST receipts input', () => {
  it('accepts seq runs and counts them', () => {
    expect(
      parseReceipts({
        group: 'g',
        stream: 's',
        seqs: [
          [1, 5],
          [9, 9],
        ],
      }),
    ).toMatchObject({
      kind: 'seqs',
      batch: {
        group: 'g',
        stream: 's',
        seqs: [
          [1, 5],
          [9, 9],
        ],
        count: 6,
      },
    });
  });

  it('accepts counts per time bucket', () => {
    const input = parseReceipts({
      group: 'g',
      topic: 't',
      buckets: [{ start: '2026-11-29T10:00:00Z', end: '2026-11-29T10:01:00Z', count: 42 }],
    });
    expect(input).toMatchObject({
      kind: 'buckets',
      buckets: [{ count: 42, start: '2026-11-29T10:00:00.000Z' }],
    });
  });

  it.each([
    [{ stream: 's', seqs: [[1, 2]] }, 'group'],
    [{ group: 'g', stream: 's', seqs: [] }, 'seqs'],
    [{ group: 'g', stream: 's', seqs: [[3, 2]] }, 'seqs[0]'],
    [{ group: 'g', stream: 's', seqs: [[0, 2]] }, 'seqs[0]'],
    [{ group: 'g', stream: 'bad stream', seqs: [[1, 2]] }, 'stream'],
    [{ group: 'g', stream: 's', seqs: [[1, 2]], extra: 1 }, 'extra'],
    [
      { group: 'g', topic: 't', buckets: [{ start: 'x', end: '2026-11-29T10:00:00Z', count: 1 }] },
      'buckets[0].start',
    ],
    [
      {
        group: 'g',
        topic: 't',
        buckets: [{ start: '2026-11-29T10:01:00Z', end: '2026-11-29T10:00:00Z', count: 1 }],
      },
      'buckets[0].end',
    ],
    [
      {
        group: 'g',
        topic: 't',
        buckets: [{ start: '2026-11-29T10:00:00Z', end: '2026-11-29T10:01:00Z', count: -1 }],
      },
      'buckets[0].count',
    ],
  ])('refuses %j naming %s', (body, field) => {
    let error: unknown;
    try {
      parseReceipts(body);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).field).toBe(field);
  });

  it('refuses more than 10,000 runs with 413', () => {
    const seqs = Array.from({ length: 10_001 }, (_, i) => [i * 2 + 1, i * 2 + 1]);
    expect(() => parseReceipts({ group: 'g', stream: 's', seqs })).toThrow(PayloadTooLargeError);
  });
});

describe('tallyReceipts middleware', () => {
  const event = {
    eventSource: 'aws:kafka' as const,
    eventSourceArn: 'arn',
    bootstrapServers: 'b',
    records: { 'orders-0': [record(0, 1, 'orders', 1)] },
  };

  it('writes the batch receipts after the handler succeeded', async () => {
    const writeAll = vi.fn(async () => {});
    const middleware = tallyReceipts({ group: 'billing', sink: { writeAll } });
    await middleware.after?.({
      event,
      context: {},
      response: undefined,
      error: undefined,
      internal: {},
    } as never);
    expect(writeAll).toHaveBeenCalledWith([
      expect.objectContaining({ group: 'billing', stream: 'orders', seqs: [[1, 1]] }),
    ]);
    expect(middleware.onError).toBeUndefined();
  });

  it('fails the invocation when the receipts cannot be written, so the batch comes again', async () => {
    const middleware = tallyReceipts({
      group: 'billing',
      sink: async () => ({ writeAll: async () => Promise.reject(new Error('DynamoDB down')) }),
    });
    await expect(
      middleware.after?.({
        event,
        context: {},
        response: undefined,
        error: undefined,
        internal: {},
      } as never),
    ).rejects.toThrow('DynamoDB down');
  });
});
