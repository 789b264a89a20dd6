// The offset-repair workflow's planning and execution, given the reconcile ports (the handlers in
// repair-tasks.ts pass the container's runtime; tests pass fakes). Each returns a summary of
// bounded size: the plan itself (~100 bytes a partition) is stored, and only its id and digest
// travel between states and into the approval request.
import { randomUUID } from 'node:crypto';
import { planDigest } from '../core/reconcile/stored-plan.js';
import {
  InvalidInputError,
  NotFoundError,
  UnprocessableInputError,
} from '../core/shared/errors.js';
import { isPlainObject } from '../core/shared/input-checks.js';
import { executeRestore, restorePlan } from '../reconciling/restore-actions.js';
import type { ReconcileRuntime } from '../reconciling/runtime.js';

export type RepairPorts = Pick<
  ReconcileRuntime,
  'config' | 'history' | 'offsets' | 'restores' | 'plans'
>;

const GROUP = /^[\x21-\x7e]{1,255}$/;
const PLAN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
/** Targets shown to the person deciding, in the approval request; the rest are counted. */
export const PREVIEW_TARGETS = 20;
/**
 * Topics one run audits (one Map iteration each): their audit summaries, ~500 bytes each at
 * most, are gathered into one state. A group rewound on more is refused before anything changes.
 */
export const MAX_AUDITED_TOPICS = 200;

function field(input: unknown, name: string, pattern: RegExp, what: string): string {
  const value = isPlainObject(input) ? input[name] : undefined;
  if (typeof value !== 'string' || !pattern.test(value)) {
    throw new InvalidInputError(`${name}: ${what}`, { field: name });
  }
  return value;
}

export const groupOf = (input: unknown) =>
  field(input, 'group', GROUP, 'the consumer group id to repair');

/** `{group}` → `{needed, group, planId, digest, partitions, topics, preview}`; the plan is stored. */
export async function planRepairTask(rt: RepairPorts, input: unknown) {
  const group = groupOf(input);
  const plan = await restorePlan(rt, group);
  const topics = [...new Set(plan.partitions.map((p) => p.topic))].sort();
  if (plan.partitions.length === 0) return { needed: false, group, partitions: 0, topics };
  if (topics.length > MAX_AUDITED_TOPICS) {
    throw new UnprocessableInputError(
      `group: ${group} needs a restore on ${topics.length} topics; offset-repair audits at most ${MAX_AUDITED_TOPICS} in one run. Restore it with POST /v3/clusters/{cluster_id}/consumer-groups/${group}/restore and audit its topics separately`,
      { field: 'group' },
    );
  }
  const planId = randomUUID();
  const digest = planDigest(plan);
  await rt.plans.save(planId, plan, digest);
  return {
    needed: true,
    group,
    planId,
    digest,
    partitions: plan.partitions.length,
    topics,
    preview: plan.partitions.slice(0, PREVIEW_TARGETS),
  };
}

/** `{group, planId, digest}` → what was set, counted; only the stored plan with that digest. */
export async function executeRepairTask(rt: RepairPorts, input: unknown) {
  const group = groupOf(input);
  const planId = field(input, 'planId', PLAN_ID, 'the id PlanRepair stored the plan under');
  const digest = field(input, 'digest', DIGEST, 'the approved plan digest (sha256:…)');
  const plan = await rt.plans.load(group, planId);
  if (!plan) {
    throw new NotFoundError(`planId: group ${group} has no stored plan ${planId} (kept 30 days)`, {
      field: 'planId',
    });
  }
  if (planDigest(plan) !== digest) {
    throw new UnprocessableInputError(
      `digest: the stored plan ${planId} is not the approved one; nothing was changed`,
      { field: 'digest' },
    );
  }
  const done = await executeRestore(rt, plan);
  return {
    group,
    planId,
    digest,
    executedAt: done.executedAt,
    partitions: done.partitions.length,
    topics: new Set(done.partitions.map((p) => p.topic)).size,
    // Where executeRestore kept the record of every offset it changed.
    record: {
      table: rt.config.tables.reconcileReports,
      key: { group, sk: `restore#${done.executedAt}` },
    },
  };
}
