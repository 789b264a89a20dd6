import { describe, expect, it } from 'vitest';
import { type DynamoDbCall, roundTrips, SDK_RETRY_AFTER_MS } from '../../helpers/dynamodb-proxy.js';

const call = (
  operation: string,
  startedAt: number,
  answeredAt: number | undefined,
  input: Record<string, unknown> = { TableName: 'ledger' },
): DynamoDbCall => ({
  operation,
  table: 'ledger',
  input,
  startedAt,
  ...(answeredAt !== undefined && { answeredAt }),
});

describe('roundTrips: the steps a piece of work took through the proxy', () => {
  it('calls in a row are steps, calls side by side one step', () => {
    expect(
      roundTrips([
        call('UpdateItem', 0, 25),
        call('Query', 26, 51, { a: 1 }),
        call('Query', 27, 52, { a: 2 }),
        call('PutItem', 53, 78),
      ]),
    ).toEqual([['UpdateItem'], ['Query', 'Query'], ['PutItem']]);
  });

  it("the SDK's retry of an attempt that timed out is the same call, and its answer ends the step", () => {
    // The first PutItem's answer came only after the SDK had given up on it and sent it again.
    const timedOut = 1000;
    expect(
      roundTrips([
        call('UpdateItem', 0, 25),
        call('PutItem', 26, 26 + timedOut + 400),
        call('PutItem', 26 + timedOut, 26 + timedOut + 30),
        call('Query', 26 + timedOut + 31, 26 + timedOut + 56),
      ]),
    ).toEqual([['UpdateItem'], ['PutItem'], ['Query']]);
  });

  it('the same call sent twice side by side is two calls (Tally doing it twice is a finding)', () => {
    expect(roundTrips([call('PutItem', 0, 25), call('PutItem', 2, 27)])).toEqual([
      ['PutItem', 'PutItem'],
    ]);
    // Sent again once the first was answered: a second step, not a retry.
    expect(
      roundTrips([
        call('PutItem', 0, 25),
        call('PutItem', SDK_RETRY_AFTER_MS + 30, SDK_RETRY_AFTER_MS + 55),
      ]),
    ).toEqual([['PutItem'], ['PutItem']]);
  });
});
