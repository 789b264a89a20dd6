import { createHash } from 'node:crypto';
import type { RestorePlan, RestoreTarget } from './restore-plan.js';

// A restore plan kept aside while a person decides on it: the offset-repair workflow passes only
// its id and digest between states (a plan grows ~100 bytes a partition; a Step Functions state
// holds 256 KiB), and executes the plan only if the stored one still has the approved digest.

export interface PlanStore {
  save(planId: string, plan: RestorePlan, digest: string): Promise<void>;
  /** The plan as saved, or undefined when there is none (never saved, or expired). */
  load(group: string, planId: string): Promise<RestorePlan | undefined>;
}

/** The plan's targets as compact rows, in order: what is stored and what the digest covers. */
export type TargetRow = readonly [string, number, number | null, number, string];

export const toRow = (p: RestoreTarget): TargetRow => [
  p.topic,
  p.partition,
  p.current,
  p.target,
  p.goodAt,
];

export const fromRow = ([topic, partition, current, target, goodAt]: TargetRow): RestoreTarget => ({
  topic,
  partition,
  current,
  target,
  goodAt,
});

/** `sha256:<hex>` of the group and every target (topic, partition, current, target, goodAt). */
export function planDigest(plan: RestorePlan): string {
  const hash = createHash('sha256').update(JSON.stringify(plan.group));
  for (const p of plan.partitions) hash.update(`\n${JSON.stringify(toRow(p))}`);
  return `sha256:${hash.digest('hex')}`;
}
