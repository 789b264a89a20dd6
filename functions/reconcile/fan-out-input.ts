// What the reconcile fan-out's tasks accept (infra/state-machines/reconcile-fan-out.asl.json),
// checked field by field.

import { DEFAULT_SHARDS, MAX_SHARDS } from '../core/reconcile/group-shards.js';
import type { FailedChild, ShardSummary } from '../core/reconcile/shard-summary.js';
import { InvalidInputError } from '../core/shared/errors.js';
import { isPlainObject, taskInputObject } from '../core/shared/input-checks.js';

/** Group ids are Kafka strings; a prefix longer than Kafka's practical ids is a mistake. */
const MAX_PREFIX = 255;

function shardCount(value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > MAX_SHARDS)
    throw new InvalidInputError(`shards: an integer from 1 to ${MAX_SHARDS}`, { field: 'shards' });
  return value as number;
}

function groupPrefix(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value !== 'string' || value.length > MAX_PREFIX)
    throw new InvalidInputError(`prefix: a string of at most ${MAX_PREFIX} characters`, {
      field: 'prefix',
    });
  return value;
}

/** `{shards?, prefix?}` (a scheduled event's fields are not ours: `{}` is the usual input). */
export function parsePlanInput(input: unknown) {
  const { shards, prefix } = taskInputObject(input, ['shards', 'prefix']);
  return {
    shards: shards === undefined ? DEFAULT_SHARDS : shardCount(shards),
    prefix: groupPrefix(prefix),
  };
}

/** `{shard, shards, prefix}`: the groups one child reconciles. */
export function parseChildInput(input: unknown) {
  const { shard, shards, prefix } = taskInputObject(input, ['shard', 'shards', 'prefix']);
  const count = shardCount(shards);
  if (!Number.isSafeInteger(shard) || (shard as number) < 0 || (shard as number) >= count)
    throw new InvalidInputError(`shard: an integer from 0 to ${count - 1}`, { field: 'shard' });
  return { shard: shard as number, shards: count, prefix: groupPrefix(prefix) };
}

const isCount = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;

function childResult(value: unknown, index: number): ShardSummary | FailedChild {
  const field = `results[${index}]`;
  if (isPlainObject(value) && typeof value.Error === 'string')
    return { Error: value.Error, Cause: typeof value.Cause === 'string' ? value.Cause : '' };
  const counts = ['shard', 'groups', 'partitions', 'adminCalls', 'problemsNotShown'] as const;
  if (
    !isPlainObject(value) ||
    !counts.every((name) => isCount(value[name])) ||
    !isCount(value.problemsTrimmed) ||
    typeof value.runAt !== 'string' ||
    typeof value.complete !== 'boolean' ||
    !isPlainObject(value.statuses) ||
    !isPlainObject(value.mappings) ||
    !Array.isArray(value.problems) ||
    !isPlainObject(value.unreadable)
  )
    throw new InvalidInputError(`${field}: a child's shard summary or its error`, { field });
  return value as unknown as ShardSummary;
}

/** `{results}`: the Map's output, one shard summary or failure per child, in shard order. */
export function parseMergeInput(input: unknown) {
  const { results } = taskInputObject(input, ['results']);
  if (!Array.isArray(results) || results.length === 0 || results.length > MAX_SHARDS)
    throw new InvalidInputError(`results: one entry per child, at most ${MAX_SHARDS}`, {
      field: 'results',
    });
  return { results: results.map(childResult) };
}
