import { describe, expect, it } from 'vitest';
import { postReceipts, receiptBodies } from '../../../../packages/consumer/src/http-receipts.js';

const record = (stream: string, seq: number) => ({
  headers: { 'tally.stream': Buffer.from(stream), 'tally.seq': Buffer.from(String(seq)) },
});

describe('receipts over HTTP', () => {
  it('one body per stream, runs in the order processed, records without headers left out', () => {
    const records = [
      record('a', 1),
      record('a', 2),
      record('b', 7),
      { headers: {} },
      record('a', 2),
      record('a', 3),
    ];
    expect(receiptBodies('g', records)).toEqual([
      {
        group: 'g',
        stream: 'a',
        seqs: [
          [1, 2],
          [2, 3],
        ],
      },
      { group: 'g', stream: 'b', seqs: [[7, 7]] },
    ]);
  });

  it('posts each body to the receipts route and rejects on a refusal', async () => {
    const calls: Array<[string, RequestInit | undefined]> = [];
    let status = 202;
    const post = postReceipts({
      baseUrl: 'http://tally.test/',
      clusterId: 'c 1',
      token: async () => 't',
      fetch: async (url, init) => {
        calls.push([String(url), init]);
        return new Response('{}', { status });
      },
    });
    await post([{ group: 'g', stream: 'a', seqs: [[1, 2]] }]);
    expect(calls[0]?.[0]).toBe('http://tally.test/v3/clusters/c%201/receipts');
    expect(calls[0]?.[1]?.headers).toEqual({
      'content-type': 'application/json',
      authorization: 'Bearer t',
    });
    status = 400;
    await expect(post([{ group: 'g', stream: 'a', seqs: [[1, 2]] }])).rejects.toThrow(
      /answered 400/,
    );
  });
});
