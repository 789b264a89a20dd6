import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type {
  RestorePlan,
  RestoreTarget,
} from '../../../../functions/core/reconcile/restore-plan.js';
import { fromRow, planDigest, toRow } from '../../../../functions/core/reconcile/stored-plan.js';

const target = (over: Partial<RestoreTarget> = {}): RestoreTarget => ({
  topic: 'orders',
  partition: 3,
  current: null,
  target: 120,
  goodAt: '2026-11-29T10:00:00.000Z',
  ...over,
});

const plan = (partitions: RestoreTarget[], group = 'billing'): RestorePlan => ({
  group,
  partitions,
  csv: 'not covered by the digest',
});

describe('stored plan rows', () => {
  it('keeps a target as a compact row and reads it back the same', () => {
    const t = target({ current: 90 });
    expect(toRow(t)).toEqual(['orders', 3, 90, 120, '2026-11-29T10:00:00.000Z']);
    expect(fromRow(toRow(t))).toEqual(t);
    expect(fromRow(toRow(target()))).toEqual(target());
  });
});

describe('planDigest', () => {
  it('is sha256 of the group and each target row, one per line', () => {
    const p = plan([target(), target({ partition: 4, current: 7 })]);
    const expected = createHash('sha256')
      .update(JSON.stringify('billing'))
      .update(`\n${JSON.stringify(toRow(target()))}`)
      .update(`\n${JSON.stringify(toRow(target({ partition: 4, current: 7 })))}`)
      .digest('hex');
    expect(planDigest(p)).toBe(`sha256:${expected}`);
  });

  it('changes with the group, any target field or the targets order; not with the CSV', () => {
    const base = planDigest(plan([target(), target({ partition: 4 })]));
    expect(planDigest({ ...plan([target(), target({ partition: 4 })]), csv: 'other' })).toBe(base);
    for (const changed of [
      plan([target(), target({ partition: 4 })], 'search'),
      plan([target({ target: 121 }), target({ partition: 4 })]),
      plan([target({ current: 0 }), target({ partition: 4 })]),
      plan([target({ goodAt: '2026-11-29T10:00:01.000Z' }), target({ partition: 4 })]),
      plan([target({ partition: 4 }), target()]),
      plan([target()]),
    ]) {
      expect(planDigest(changed)).not.toBe(base);
    }
  });
});
