import { randomUUID } from 'node:crypto';
import type { GroupSnapshot } from '../../functions/core/reconcile/ports.js';
import { createReconciler } from '../../functions/core/reconcile/reconciler.js';
import type { RestorePlan } from '../../functions/core/reconcile/restore-plan.js';
import type { PlanStore } from '../../functions/core/reconcile/stored-plan.js';
import { summarizeReconcile } from '../../functions/core/reconcile/summary.js';
import { restorePlan } from '../../functions/reconciling/restore-actions.js';
import type { PublishedRecord } from '../../functions/workflows/publish-record.js';
import {
  executeRepairTask,
  planRepairTask,
  type RepairPorts,
} from '../../functions/workflows/repair-plan.js';
import type { Invoke } from '../../infra/local/payload-limits.js';
import { payloadBytes } from '../../infra/local/payload-limits.js';
import type { LocalStepFunctions } from '../../infra/local/step-functions.js';
import { memoryHistory, memoryReports } from './reconcile-stores.js';

// A cluster of any size for the workflows, with the reconcile core and the offset-repair tasks
// running over in-memory ports: the state machines run through the local runner (with AWS's
// payload limits) at sizes no local broker could hold. `REPAIRED` consumes every partition and
// has been rewound on all of them; the other groups each consume `partitions / groups`.

export const REPAIRED = 'repair-me';
const LOG_END = 1000;

export interface ClusterSize {
  readonly groups: number;
  readonly partitions: number;
  readonly partitionsPerTopic?: number;
}

function snapshots({ groups, partitions, partitionsPerTopic = 100 }: ClusterSize) {
  const all = Array.from({ length: partitions }, (_, i) => ({
    topic: `orders-${String(Math.floor(i / partitionsPerTopic)).padStart(4, '0')}`,
    partition: i % partitionsPerTopic,
    logStart: 0,
    logEnd: LOG_END,
  }));
  const each = Math.max(1, Math.floor(partitions / Math.max(1, groups - 1)));
  const others: GroupSnapshot[] = Array.from({ length: groups - 1 }, (_, g) => ({
    groupId: `group-${String(g).padStart(5, '0')}`,
    state: 'Empty',
    members: [],
    partitions: all
      .slice((g * each) % partitions, ((g * each) % partitions) + each)
      .map((p) => ({ ...p, committed: LOG_END - 100 })),
  }));
  const repaired = (committed: number): GroupSnapshot => ({
    groupId: REPAIRED,
    state: 'Empty',
    members: [],
    partitions: all.map((p) => ({ ...p, committed })),
  });
  return { others, repaired };
}

export function simulatedCluster(size: ClusterSize) {
  const { others, repaired } = snapshots(size);
  let committed = LOG_END;
  const history = memoryHistory();
  const plans = new Map<string, string>();
  const set: Array<{ group: string; offsets: number }> = [];
  const planStore: PlanStore = {
    async save(planId, plan) {
      plans.set(planId, JSON.stringify(plan));
    },
    async load(_group, planId) {
      const stored = plans.get(planId);
      return stored === undefined ? undefined : (JSON.parse(stored) as RestorePlan);
    },
  };
  const reportStore = memoryReports();
  const ports = {
    config: { tables: { reconcileReports: 'tally-reconcile-reports' } },
    history,
    restores: { save: async () => {} },
    offsets: {
      groupState: async () => 'Empty',
      setOffsets: async (group: string, offsets: readonly unknown[]) => {
        set.push({ group, offsets: offsets.length });
      },
    },
    plans: planStore,
  } as unknown as RepairPorts;
  let observedAt = Date.parse('2026-11-30T12:00:00Z');
  const reconciler = createReconciler(
    {
      source: {
        read: async () => {
          observedAt += 60_000;
          return {
            observedAt,
            groups: [...others, repaired(committed)],
            unreadable: [],
            adminCalls: 3,
          };
        },
      },
      history: ports.history,
      reports: reportStore,
      mappings: {
        list: async () => [],
        upsert: async () => true,
        deleteIfUnchanged: async () => true,
      },
    },
    { windowSize: 10, graceMs: 0, retentionMs: 14 * 86_400_000, pruneBudget: 200 },
  );
  return {
    ports,
    reconciler,
    /** Offsets set by ExecuteRestore: one entry per call. */
    set,
    /** Reconciles once at the good offsets, then rewinds REPAIRED by half. */
    async seedRewind() {
      await reconciler.run();
      committed = LOG_END / 2;
    },
  };
}

export type SimulatedCluster = ReturnType<typeof simulatedCluster>;

/** How the tasks answered before issue 13: the whole report, the whole plan, the whole record. */
export interface OldShapes {
  readonly reconcile?: boolean;
  readonly planRepair?: boolean;
  readonly publishRecord?: boolean;
}

/**
 * The functions both state machines call, over the simulated cluster: the reconcile core and
 * the repair tasks for real, approval granted at once, audit and publish as their handlers
 * answer. `outputs` collects the bytes of every task's result, by function.
 */
export function simulatedInvoke(
  cluster: SimulatedCluster,
  sfn: () => LocalStepFunctions,
  old: OldShapes = {},
) {
  const outputs: Record<string, number> = {};
  const approvals: unknown[] = [];
  const tasks: Record<string, (payload: unknown) => Promise<unknown>> = {
    reconcile: async () => {
      const report = await cluster.reconciler.run();
      return old.reconcile ? report : summarizeReconcile(report, 'tally-reconcile-reports');
    },
    planRepair: async (input) => {
      if (old.planRepair) {
        const plan = await restorePlan(cluster.ports, (input as { group: string }).group);
        const topics = [...new Set(plan.partitions.map((p) => p.topic))].sort();
        return { needed: plan.partitions.length > 0, plan, topics };
      }
      return planRepairTask(cluster.ports, input);
    },
    requestApproval: async (input) => {
      approvals.push(input);
      const { token } = input as { token: string };
      setTimeout(() => sfn().sendTaskSuccess(token, '{"approved":true,"by":"sim","reason":null}'));
      return { approvalToken: randomUUID() };
    },
    checkGroupEmpty: async (input) => ({
      group: (input as { group: string }).group,
      state: 'Empty',
    }),
    executeRepair: async (input) => executeRepairTask(cluster.ports, input),
    audit: async (input) => ({
      audits: [
        {
          auditId: randomUUID(),
          topic: (input as { topic: string }).topic,
          complete: true,
          scanned: 100_000,
          streams: 1,
          settled: { landed: 0, notWritten: 0 },
        },
      ],
    }),
    publishRecord: async (input) => {
      const { idempotencyKey } = (input as { item: { idempotencyKey: string } }).item;
      const seq = 1_000_000 + Number(idempotencyKey.replace(/\D/g, ''));
      if (!old.publishRecord) return { idempotencyKey, seq } satisfies PublishedRecord;
      // A ProduceReport as publish answers a record (recordReport), for this record.
      const topic = (input as { topic: string }).topic;
      return {
        idempotencyKey,
        report: {
          cluster_id: 'lkc-tally-local-cluster0',
          topic_name: topic,
          partition_id: seq % 12,
          offset: seq,
          timestamp: '2026-11-30T12:00:00.000Z',
          key: null,
          value: { type: 'JSON', size: 9 },
          stream: topic,
          seq,
          session: randomUUID(),
          outcome: 'ACKED',
          error_code: 200,
        },
      };
    },
    verifyPublished: async (input) => ({
      verified: (input as { published: unknown[] }).published.length,
      auditIds: (input as { audits: Array<{ auditId: string }> }).audits.map((a) => a.auditId),
    }),
  };
  const invoke: Invoke = async (functionName, payload) => {
    const task = tasks[functionName];
    if (!task) throw new Error(`the simulation has no function ${functionName}`);
    const result = await task(payload);
    outputs[functionName] = Math.max(outputs[functionName] ?? 0, payloadBytes(result));
    return result;
  };
  return { invoke, outputs, approvals };
}
