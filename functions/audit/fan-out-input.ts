// What the fan-out audit's tasks accept (infra/state-machines/audit-fan-out.asl.json), checked.

import { InvalidInputError } from '../core/shared/errors.js';
import { taskInputObject } from '../core/shared/input-checks.js';
import { parseAuditRequest } from './request.js';

const MAX_PARTITIONS_PER_CHILD = 10_000;

function partition(value: unknown, field: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0)
    throw new InvalidInputError(`${field}: must be a partition number`, { field });
  return value as number;
}

/** `{topic, groups?, partitionsPerChild?}`. */
export function parsePlanInput(input: unknown) {
  const { partitionsPerChild, ...rest } = taskInputObject(input, [
    'topic',
    'groups',
    'partitionsPerChild',
  ]);
  const { topic, groups } = parseAuditRequest(rest);
  if (
    partitionsPerChild !== undefined &&
    (!Number.isSafeInteger(partitionsPerChild) ||
      (partitionsPerChild as number) < 1 ||
      (partitionsPerChild as number) > MAX_PARTITIONS_PER_CHILD)
  ) {
    throw new InvalidInputError(
      `partitionsPerChild: an integer from 1 to ${MAX_PARTITIONS_PER_CHILD}`,
      { field: 'partitionsPerChild' },
    );
  }
  return { topic, groups, partitionsPerChild: partitionsPerChild as number | undefined };
}

/** `{topic, slice, first, last}`: one child's partitions, first to last. */
export function parseChildInput(input: unknown) {
  const { topic, slice, first, last } = taskInputObject(input, ['topic', 'slice', 'first', 'last']);
  parseAuditRequest({ topic });
  const from = partition(first, 'first');
  const to = partition(last, 'last');
  if (to < from) throw new InvalidInputError('last: must not be below first', { field: 'last' });
  if (slice !== `${from}-${to}`)
    throw new InvalidInputError(`slice: must be "${from}-${to}"`, { field: 'slice' });
  return { topic: topic as string, slice, first: from, last: to };
}

/** `{topic, groups, slices}`: the slices the children read, to merge. */
export function parseMergeInput(input: unknown) {
  const { slices, ...rest } = taskInputObject(input, ['topic', 'groups', 'slices']);
  const { topic, groups } = parseAuditRequest(rest);
  if (
    !Array.isArray(slices) ||
    slices.length === 0 ||
    slices.some((s) => typeof s !== 'string' || !/^\d+-\d+$/.test(s))
  ) {
    throw new InvalidInputError('slices: a list of slice names ("first-last")', {
      field: 'slices',
    });
  }
  return { topic, groups, slices: slices as string[] };
}
