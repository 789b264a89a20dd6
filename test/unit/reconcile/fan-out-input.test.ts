import { describe, expect, it } from 'vitest';
import { DEFAULT_SHARDS, MAX_SHARDS } from '../../../functions/core/reconcile/group-shards.js';
import { InvalidInputError } from '../../../functions/core/shared/errors.js';
import {
  parseChildInput,
  parseMergeInput,
  parsePlanInput,
} from '../../../functions/reconcile/fan-out-input.js';

// The reconcile fan-out's task inputs (infra/state-machines/reconcile-fan-out.asl.json): every
// field checked, a bad one refused as InvalidInputError naming it (Step Functions does not retry
// it: the state machine's Retry lists only dependency errors).

const refused = (parse: () => unknown, field: string) => {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).field).toBe(field);
    return;
  }
  throw new Error(`accepted; expected a refusal naming ${field}`);
};

describe('reconcile fan-out inputs', () => {
  it('plans 8 shards of every group by default, up to 64 when asked', () => {
    expect(parsePlanInput({})).toEqual({ shards: DEFAULT_SHARDS, prefix: '' });
    expect(parsePlanInput({ shards: MAX_SHARDS, prefix: 'billing.' })).toEqual({
      shards: MAX_SHARDS,
      prefix: 'billing.',
    });
    for (const shards of [0, MAX_SHARDS + 1, 1.5, '4', null])
      refused(() => parsePlanInput({ shards }), 'shards');
    refused(() => parsePlanInput({ prefix: 7 }), 'prefix');
    refused(() => parsePlanInput({ prefix: 'x'.repeat(256) }), 'prefix');
    refused(() => parsePlanInput({ shard: 1 }), 'shard');
    refused(() => parsePlanInput([]), 'input');
  });

  it('takes a child only inside its shard count', () => {
    expect(parseChildInput({ shard: 3, shards: 4, prefix: '' })).toEqual({
      shard: 3,
      shards: 4,
      prefix: '',
    });
    refused(() => parseChildInput({ shard: 4, shards: 4, prefix: '' }), 'shard');
    refused(() => parseChildInput({ shard: -1, shards: 4 }), 'shard');
    refused(() => parseChildInput({ shard: 0, shards: 0 }), 'shards');
  });

  it("merges a shard summary or a child's error per entry, nothing else", () => {
    const failed = { Error: 'DependencyFailedError', Cause: 'deadline' };
    expect(parseMergeInput({ results: [failed] }).results).toEqual([failed]);
    refused(() => parseMergeInput({ results: [] }), 'results');
    refused(() => parseMergeInput({ results: [{ shard: 0, groups: 2 }] }), 'results[0]');
    refused(() => parseMergeInput({ results: Array(MAX_SHARDS + 1).fill(failed) }), 'results');
  });
});
